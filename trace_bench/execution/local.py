"""The local executor: every job in a fresh process forked from a warm template.

``multiprocessing`` ``forkserver`` with ``set_forkserver_preload`` imports ``opto`` and the
trainer stack once in a template process; each job is forked from it (tens of ms), runs in its
own process group with optional memory limit, and is never reused.  The driver waits on process
sentinels (no busy polling), enforces wall-clock timeouts by killing the whole process group,
and receives each job's record over a pipe.
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait
from typing import Any

_CONTEXT: Any = None


def job_context() -> Any:
    """The process context for jobs; the forkserver template is shared by every run of a process."""
    global _CONTEXT
    if _CONTEXT is None:
        # Jobs must be reproducible: opto builds prompts by iterating sets, whose order depends on
        # the string hash seed.  The template (and so every forked job) gets a fixed one.
        os.environ.setdefault("PYTHONHASHSEED", "0")
        methods = mp.get_all_start_methods()
        if "forkserver" in methods:
            _CONTEXT = mp.get_context("forkserver")
            _CONTEXT.set_forkserver_preload(["trace_bench.execution.child"])
        else:  # pragma: no cover - platforms without fork
            _CONTEXT = mp.get_context("spawn")
    return _CONTEXT


def warm_up() -> None:
    """Start the template process early so its imports overlap with the driver's own work."""
    context = job_context()
    if context.get_start_method() == "forkserver":
        from multiprocessing import forkserver

        forkserver.ensure_running()


@dataclass
class Running:
    job_id: str
    process: Any
    conn: Connection
    started: float
    timeout: float | None
    record: dict[str, Any] | None = None
    killed_reason: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass
class Finished:
    job_id: str
    record: dict[str, Any] | None
    exitcode: int | None
    killed_reason: str | None
    wall_s: float
    extra: dict[str, Any]


def kill_group(process: Any) -> None:
    pid = process.pid
    if pid is None:
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        try:
            process.kill()
        except Exception:
            pass


class LocalExecutor:
    """Runs up to ``max_workers`` job processes at once."""

    def __init__(self, max_workers: int) -> None:
        self.max_workers = max(1, int(max_workers))
        self.running: dict[str, Running] = {}

    @property
    def free_slots(self) -> int:
        return self.max_workers - len(self.running)

    def submit(self, job_id: str, payload: dict[str, Any], timeout: float | None, **extra: Any) -> None:
        from trace_bench.execution.child import job_process_main

        context = job_context()
        receiver, sender = context.Pipe(duplex=False)
        process = context.Process(target=job_process_main, args=(payload, sender), name=f"job-{job_id}",
                                  daemon=False)
        process.start()
        sender.close()
        self.running[job_id] = Running(job_id, process, receiver, time.monotonic(), timeout or None, extra=extra)

    def poll(self, block_s: float = 0.5) -> list[Finished]:
        """Wait up to ``block_s`` for a job event; return the jobs that ended."""
        if not self.running:
            return []
        now = time.monotonic()
        deadlines = [r.started + r.timeout - now for r in self.running.values() if r.timeout]
        wait_s = max(0.0, min([block_s, *deadlines])) if deadlines else block_s
        handles: list[Any] = []
        for r in self.running.values():
            handles.append(r.process.sentinel)
            if r.record is None:
                handles.append(r.conn)
        wait(handles, timeout=wait_s)
        finished: list[Finished] = []
        now = time.monotonic()
        for job_id, r in list(self.running.items()):
            if r.record is None:
                try:
                    if r.conn.poll():
                        r.record = r.conn.recv()
                except (EOFError, OSError):
                    pass
            if r.timeout and r.record is None and now - r.started > r.timeout and r.process.is_alive():
                r.killed_reason = "timeout"
                kill_group(r.process)
            if not r.process.is_alive():
                r.process.join(timeout=1)
                if r.record is None:
                    try:
                        if r.conn.poll():
                            r.record = r.conn.recv()
                    except (EOFError, OSError):
                        pass
                r.conn.close()
                finished.append(Finished(job_id, r.record, r.process.exitcode, r.killed_reason,
                                         now - r.started, r.extra))
                del self.running[job_id]
                kill_group(r.process)  # anything the job left behind in its group
        return finished

    def kill_all(self, reason: str = "interrupted") -> None:
        for r in self.running.values():
            r.killed_reason = reason
            kill_group(r.process)

    def drain(self, on_finished: Callable[[Finished], None], block_s: float = 0.5) -> None:
        while self.running:
            for item in self.poll(block_s):
                on_finished(item)

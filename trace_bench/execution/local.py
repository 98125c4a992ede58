"""The local executor: every job in a fresh process forked from a warm template.

``multiprocessing`` ``forkserver`` with ``set_forkserver_preload`` imports the modules the runner
names (``opto``, the trainer stack, the job body) once in a template process; each job is forked
from it (tens of ms), runs in its own process group with an optional memory limit, and is never reused.  The
template is a subreaper that takes every job's whole process tree down when the driver dies
(:mod:`.reaper`).  The driver waits on process sentinels (no busy polling), enforces wall-clock timeouts by
killing the whole process group, and receives each job's outcome over a pipe.
"""

from __future__ import annotations

import contextlib
import multiprocessing as mp
import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from multiprocessing.connection import Connection, wait
from typing import TYPE_CHECKING, Any

from trace_bench._util.processes import die_with_parent, kill_process_group

if TYPE_CHECKING:  # imported where used: starting the template early must stay cheap for the driver
    from trace_bench.execution.job_process import Finished, JobBody, JobLaunch

_CONTEXT: Any = None
_FORKED_JOBS = False  # whether the template has forked a job (and so may own processes)
_REAPER = "trace_bench.execution.reaper"  # first: the template owns every job's processes


#: a Unix socket's address holds 107 bytes; multiprocessing names the forkserver's socket
#: ``<tmpdir>/pymp-XXXXXXXX/listener-XXXXXXXX`` (about 34 more)
_SOCKET_PATH_MAX = 107 - 34


def _short_socket_dir() -> None:
    """Give multiprocessing a temporary directory short enough for its forkserver socket.

    Python < 3.12 puts it under ``$TMPDIR`` whatever its length, and a long one (a deep CI or test
    directory) made ``trace-bench run`` fail with ``OSError: AF_UNIX path too long`` before any job;
    3.12 falls back to a short system directory itself.  We do the same, only when needed, through
    the one hook multiprocessing reads (its process config's ``tempdir``), removed at exit as its own."""
    import tempfile
    from multiprocessing import process, util

    config = process.current_process()._config  # type: ignore[attr-defined]
    if config.get("tempdir") is not None or len(tempfile.gettempdir()) <= _SOCKET_PATH_MAX:
        return
    base = next((d for d in ("/tmp", "/var/tmp", "/dev/shm") if os.access(d, os.W_OK | os.X_OK)), None)
    if base is None:  # pragma: no cover - no short writable directory: multiprocessing reports it
        return
    import shutil

    config["tempdir"] = tempfile.mkdtemp(prefix="pymp-", dir=base)
    util.Finalize(None, shutil.rmtree, args=(config["tempdir"], True), exitpriority=-100)


def job_context(preload: Sequence[str] = ()) -> Any:
    """The process context for jobs; the forkserver template is shared by every run of a process
    (``preload`` counts for the first call only: the template starts once)."""
    global _CONTEXT
    if _CONTEXT is None:
        _short_socket_dir()
        # Jobs must be reproducible: opto builds prompts by iterating sets, whose order depends on
        # the string hash seed.  The template (and so every forked job) gets a fixed one.
        os.environ.setdefault("PYTHONHASHSEED", "0")
        if "forkserver" in mp.get_all_start_methods():
            _CONTEXT = mp.get_context("forkserver")
            _CONTEXT.set_forkserver_preload([_REAPER, *preload])
        else:  # pragma: no cover - platforms without fork
            _CONTEXT = mp.get_context("spawn")
    return _CONTEXT


def warm_up(preload: Sequence[str] = ()) -> None:
    """Start the template process now, so that its imports overlap with the driver's own work
    (it returns at once: the template imports in its own process).  Forked from this process where
    :func:`.forked_template.possible` (it then shares what this process imported), else spawned."""
    context = job_context(preload)
    if context.get_start_method() == "forkserver":
        from multiprocessing import forkserver

        from trace_bench.execution import forked_template

        if forked_template.possible():  # shares what this process imported (see .forked_template)
            forked_template.start(_fresh_module_state)
        else:
            forkserver.ensure_running()


def _fresh_module_state() -> None:
    """This module's state as a fresh interpreter has it (in a template forked from the driver)."""
    global _CONTEXT, _FORKED_JOBS
    _CONTEXT, _FORKED_JOBS = None, False


def stop_job_template() -> None:
    """Stop the template now, when the driver is done with it (the CLI at its exit).

    Left alone it exits when it sees the driver gone, but only once its imports are done: after a
    run that ended before its first job (a config error, a refused key) a real run's template went
    on importing the provider libraries for seconds of CPU, and outlived the command by up to 10 s.
    A template that never forked a job owns no process and is killed at once.  One that did is
    idle in its loop: it is asked to exit (its pipe closed) and waited for, so what the jobs left
    is killed on its way out (:mod:`.reaper`) before the command returns."""
    if _CONTEXT is None or _CONTEXT.get_start_method() != "forkserver":
        return
    import signal
    from multiprocessing import forkserver

    server: Any = forkserver._forkserver  # CPython's private forkserver state, which typeshed does not declare
    with server._lock:
        pid = server._forkserver_pid
        if pid is None:
            return
        if not _FORKED_JOBS:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
        try:
            server._stop_unlocked()  # closes its pipe, reaps it, removes its socket
        except (OSError, ChildProcessError):  # already reaped, or its socket already gone
            server._forkserver_pid = server._forkserver_address = server._forkserver_alive_fd = None


def _job_process_main(body: JobBody, launch: JobLaunch, conn: Connection) -> None:
    """A job process: let the template exit with the driver, die with the template (which kills
    everything the job started, see :mod:`.reaper`), lead its own group (a timeout kills
    everything the job started in it), run the body through the shared wrapper, send the
    outcome, exit."""
    from trace_bench.execution.job_process import run_job_body
    from trace_bench.execution.reaper import forget_forkserver_pipe
    from trace_bench.store.job_store import JobStore

    forget_forkserver_pipe()
    die_with_parent()
    os.setpgrp()
    try:
        conn.send(run_job_body(body, launch, JobStore(launch.job_dir)))
    except BaseException:  # noqa: BLE001 - the parent turns a missing outcome into a lost job
        pass
    finally:
        try:
            conn.close()
            _release_named_semaphores()
        finally:
            os._exit(0)


def _release_named_semaphores() -> None:
    """Unlink the semaphores the job created (``multiprocessing.Lock``, tqdm's write lock under
    ``datasets``).  ``os._exit`` skips the finalizers that would, and the resource tracker shared
    with the driver then warns about "leaked semaphore objects" when the run ends.  Finalizers
    registered before the fork belong to the template and are skipped (they check the pid)."""
    from multiprocessing import util

    util._run_finalizers(0)  # type: ignore[attr-defined]  # private in CPython, absent from typeshed


@dataclass
class _Running:
    launch: JobLaunch
    process: Any
    conn: Connection
    started: float
    outcome: dict[str, Any] | None = None
    killed_reason: str | None = None

    def receive(self) -> None:
        if self.outcome is None:
            try:
                if self.conn.poll():
                    self.outcome = self.conn.recv()
            except (EOFError, OSError):
                pass


class LocalExecutor:
    """Runs up to ``max_workers`` job processes at once, each running ``body``."""

    def __init__(self, max_workers: int, body: JobBody, preload: Sequence[str] = ()) -> None:
        self.max_workers = max(1, int(max_workers))
        self.body = body
        self.preload = tuple(preload)
        self.running: dict[str, _Running] = {}

    @property
    def free_slots(self) -> int:
        return self.max_workers - len(self.running)

    def submit(self, launch: JobLaunch) -> None:
        global _FORKED_JOBS
        context = job_context(self.preload)
        _FORKED_JOBS = True
        receiver, sender = context.Pipe(duplex=False)
        process = context.Process(target=_job_process_main, args=(self.body, launch, sender),
                                  name=f"job-{launch.job_id}", daemon=False)
        process.start()
        sender.close()
        self.running[launch.job_id] = _Running(launch, process, receiver, time.monotonic())

    def poll(self, block_s: float = 0.5) -> list[Finished]:
        """Wait up to ``block_s`` for a job event; return the jobs that ended."""
        from trace_bench.execution.job_process import Finished

        if not self.running:
            return []
        now = time.monotonic()
        deadlines = [r.started + r.launch.timeout_s - now for r in self.running.values() if r.launch.timeout_s]
        handles: list[Any] = []
        for r in self.running.values():
            handles.append(r.process.sentinel)
            if r.outcome is None:
                handles.append(r.conn)
        wait(handles, timeout=max(0.0, min([block_s, *deadlines])))
        finished: list[Finished] = []
        now = time.monotonic()
        for job_id, r in list(self.running.items()):
            r.receive()
            timeout = r.launch.timeout_s
            if timeout and r.outcome is None and now - r.started > timeout and r.process.is_alive():
                r.killed_reason = "timeout"
                kill_process_group(r.process)
            if not r.process.is_alive():
                r.process.join(timeout=1)
                r.receive()
                r.conn.close()
                outcome = r.outcome or {}
                finished.append(Finished(job_id, outcome.get("record"), r.process.exitcode, r.killed_reason,
                                         now - r.started, error=outcome.get("error")))
                del self.running[job_id]
                kill_process_group(r.process)  # anything the job left behind in its group
        return finished

    def kill_all(self, reason: str = "interrupted") -> None:
        for r in self.running.values():
            r.killed_reason = reason
            kill_process_group(r.process)

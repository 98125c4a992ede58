"""Waiting on conditions instead of sleeping: what tests use to follow a run from outside.

A test that needs a run to reach some point (a job started, three jobs finished, a process gone)
waits for the file, event line or process state that proves it, with a generous overall timeout
that fails the test only when the condition never arrives.  Nothing here assumes how fast the
machine is: on a loaded CI machine the same wait just takes longer.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import IO, Any, TypeVar

T = TypeVar("T")

# Long enough for a 2-core machine at load average 12 to get there; short enough that a test whose
# condition can never arrive still fails within the per-test timeout.  TRACE_BENCH_TEST_PATIENCE_S
# changes it (shorter to see a broken behaviour fail fast, longer on a very slow machine).
PATIENCE_S = float(os.environ.get("TRACE_BENCH_TEST_PATIENCE_S", "240"))


def wait_until(condition: Callable[[], T], *, timeout: float = PATIENCE_S, what: str = "condition",
               process: subprocess.Popen[Any] | None = None, interval: float = 0.02) -> T:
    """Poll ``condition`` until it returns something truthy and return that.

    ``process``: the process expected to bring the condition about; when it exits first, the
    condition can no longer arrive and the wait fails at once (after one last look).
    """
    deadline = time.monotonic() + timeout
    delay = interval
    while True:
        value = condition()
        if value:
            return value
        if process is not None and process.poll() is not None:
            value = condition()
            if value:
                return value
            raise AssertionError(f"{what}: the process exited with {process.returncode} before it happened")
        if time.monotonic() > deadline:
            raise AssertionError(f"{what}: did not happen within {timeout:.0f}s")
        time.sleep(delay)  # a poll interval, not a guess at how long anything takes
        delay = min(delay * 1.5, 0.25)


def read_events(path: Path) -> list[dict[str, Any]]:
    """The complete lines of an events.jsonl being written (a torn last line is skipped)."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return []
    events = []
    for line in text.splitlines():
        try:
            events.append(json.loads(line))
        except ValueError:
            continue
    return events


def count_events(path: Path, kind: str) -> int:
    return sum(1 for event in read_events(path) if event.get("type") == kind)


def wait_for_events(path: Path, kind: str, count: int = 1, *, process: subprocess.Popen[Any] | None = None,
                    timeout: float = PATIENCE_S) -> list[dict[str, Any]]:
    """Wait until ``path`` holds at least ``count`` events of type ``kind``; return those events."""

    def enough() -> list[dict[str, Any]]:
        found = [event for event in read_events(path) if event.get("type") == kind]
        return found if len(found) >= count else []

    return wait_until(enough, timeout=timeout, what=f"{count} '{kind}' event(s) in {path}", process=process)


def process_gone(pid: int) -> bool:
    """True when ``pid`` no longer runs (a zombie waiting to be reaped counts as gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="utf-8") as handle:
            state = handle.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError, IndexError):
        return True
    return state in ("Z", "X")


def job_pids(run_dir: Path, *, unfinished_only: bool = False) -> list[int]:
    """The pids of a run's job processes, from their heartbeat files; ``unfinished_only``: only of
    jobs without a results.json (those still running, or cut short by a kill)."""
    pids = []
    for job in run_dir.glob("jobs/*"):
        if unfinished_only and (job / "results.json").exists():
            continue
        try:
            pids.append(int(json.loads((job / "heartbeat.json").read_text(encoding="utf-8"))["pid"]))
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return pids


def wait_gone(pids: Iterable[int], *, timeout: float = PATIENCE_S, what: str = "processes") -> None:
    remaining = list(pids)
    wait_until(lambda: all(process_gone(pid) for pid in remaining), timeout=timeout,
               what=f"{what} {remaining} to exit")


class LineReader:
    """Collects the lines a child process writes to a pipe, so a test can wait for one of them."""

    def __init__(self, stream: IO[str]) -> None:
        self.lines: list[str] = []
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._read, args=(stream,), daemon=True)
        self._thread.start()

    def _read(self, stream: IO[str]) -> None:
        for line in stream:
            with self._lock:
                self.lines.append(line.rstrip("\n"))

    def text(self) -> str:
        with self._lock:
            return "\n".join(self.lines)

    def wait_for(self, fragment: str, *, process: subprocess.Popen[Any] | None = None,
                 timeout: float = PATIENCE_S) -> str:
        def found() -> str:
            with self._lock:
                return next((line for line in self.lines if fragment in line), "")

        return wait_until(found, timeout=timeout, what=f"a line containing {fragment!r}", process=process)

    def close(self) -> str:
        self._thread.join(timeout=PATIENCE_S)
        return self.text()


def kill_group(proc: subprocess.Popen[Any]) -> None:
    """Teardown of a driver started with ``start_new_session``: SIGKILL its process group (the
    driver and its job template; job processes die with the template)."""
    if proc.poll() is None:
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    proc.wait()

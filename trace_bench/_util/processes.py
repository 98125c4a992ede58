"""Process lifetimes, in one place: a child that dies with its parent, a timeout that kills a
whole process group (the job, or a tool it started, and everything those started in turn), and a
subreaper that takes every descendant down, whatever session or group it moved to."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

_PR_SET_PDEATHSIG = 1
_PR_SET_CHILD_SUBREAPER = 36


def die_with_parent() -> None:
    """Linux: SIGKILL this process when its parent exits.

    A job dies with its template (which takes every job's whole tree down when the driver dies,
    see ``execution.reaper``); a sandboxed program dies with its sandbox server.  So a killed
    driver never leaves processes writing into a run directory that a later ``--resume`` is about
    to reuse.  The signal fires when the parent *thread* ends: call this in a child of a
    single-threaded parent, or of the thread that lives as long as the parent.  If the parent already died before the request took
    effect, this process exits at once.  No-op elsewhere.
    """
    parent = os.getppid()
    if not _prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL)):
        return
    if os.getppid() != parent:  # reparented: the parent died before prctl took effect
        os._exit(1)


def _prctl(option: int, value: int) -> bool:
    """``prctl(option, value)`` on Linux; False where there is none (other systems)."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        return bool(ctypes.CDLL(None, use_errno=True).prctl(option, value, 0, 0, 0) == 0)
    except (OSError, AttributeError):  # pragma: no cover - no libc prctl
        return False


def become_subreaper() -> bool:
    """Linux: orphans among this process's descendants are re-parented to it (not to init), so
    :func:`kill_descendants` finds them even after a ``setsid`` and the death of their parent."""
    return _prctl(_PR_SET_CHILD_SUBREAPER, 1)


def descendants(pid: int) -> list[int]:
    """Every live descendant of ``pid`` (children of each of its threads, recursively); empty
    where ``/proc/<pid>/task/<tid>/children`` is not available."""
    found: list[int] = []
    pending = [pid]
    while pending:
        parent = pending.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for tid in tasks:
            try:
                children = Path(f"/proc/{parent}/task/{tid}/children").read_text().split()
            except OSError:
                continue
            for child in map(int, children):
                found.append(child)
                pending.append(child)
    return found


def kill_descendants(deadline_s: float = 5.0) -> None:
    """SIGKILL every descendant of this process and reap them.

    Meant for a subreaper (:func:`become_subreaper`): the children of a killed process come back
    to it, so repeating kill-then-reap until none is left also takes down processes forked while
    the first pass ran.  Gives up after ``deadline_s`` (a process stuck in the kernel).
    """
    me = os.getpid()
    ends = time.monotonic() + deadline_s
    while True:
        alive = descendants(me)
        for pid in alive:
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.kill(pid, signal.SIGKILL)
        _reap()
        if not alive or time.monotonic() > ends:
            return
        time.sleep(0.002)  # the killed processes exit and hand their children over


def _reap() -> None:
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return


def kill_process_group(process: subprocess.Popen[Any] | Any | int) -> None:
    """SIGKILL the process group led by ``process`` (a ``Popen``/``multiprocessing`` process or a
    pid); falls back to killing the process alone when it leads no group."""
    pid = process if isinstance(process, int) else getattr(process, "pid", None)
    if pid is None:
        return
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        if isinstance(process, int):
            return
        try:
            process.kill()
        except Exception:  # noqa: BLE001 - already gone
            pass


def communicate_or_kill(process: subprocess.Popen[str], timeout_s: float,
                        input_text: str | None = None) -> tuple[str, str, bool]:
    """``(stdout, stderr, timed_out)`` of a process started with ``start_new_session=True``; on
    timeout its whole group is killed and what it printed so far is returned."""
    try:
        out, err = process.communicate(input_text, timeout=timeout_s)
        return out or "", err or "", False
    except subprocess.TimeoutExpired:
        kill_process_group(process)
        out, err = process.communicate()
        return out or "", err or "", True

"""Process lifetimes, in one place: a child that dies with its parent, and a timeout that kills a
whole process group (the job, or a tool it started, and everything those started in turn)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from typing import Any


def die_with_parent() -> None:
    """Linux: SIGKILL this process when its parent exits.

    A job dies with its template (which dies with the driver); a sandboxed program dies with its
    sandbox server.  So a killed driver never leaves processes writing into a run directory that
    a later ``--resume`` is about to reuse.  If the parent already died before the request took
    effect, this process exits at once.  No-op elsewhere.
    """
    if not sys.platform.startswith("linux"):
        return
    parent = os.getppid()
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # pragma: no cover - no libc prctl
        return
    if os.getppid() != parent:  # reparented: the parent died before prctl took effect
        os._exit(1)


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

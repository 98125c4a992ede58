"""A job's first process watches the driver and owns every process the job starts.

Why a process of its own.  A job is forked by the ``forkserver`` template, which the standard
library keeps alive while any process holds the write end of its "alive" pipe, and it hands that
end to every process it forks.  So a job that keeps it keeps the template alive after the driver
died, and ``PR_SET_PDEATHSIG`` (which fires on the death of the parent *thread*, here the
template) never fires: a ``kill -9`` of the driver used to leave jobs running, calling the LLM
provider and writing into a run directory that ``--resume`` was about to reuse.  And a signal on
the job's death would not reach what the job started in another session (a tool run with
``start_new_session``, a sandbox).

So the process the template forks for a job (the one the driver knows by pid and kills on a
timeout, with its group) closes its copy of the alive pipe, becomes a *subreaper* (orphans among
its descendants come back to it, whatever session they moved to) and forks the job body.  Then it
only waits, single-threaded in ``select``, for the first of:

* the body ends: whatever the body left behind is killed, and it exits as the body did (same
  code, same signal, so an out-of-memory kill still reads as ``-9``);
* the driver dies (a pidfd on the driver becomes readable): every descendant is killed at once.

No body code (a busy loop, a C call holding the GIL) can delay it.  The body dies with it
(``die_with_parent``).  The driver pid is the one that wrote this job's launch data a moment ago,
so it cannot have been reused already.  Cost: one more fork per job.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
from collections.abc import Callable
from typing import NoReturn

from trace_bench.processes import become_subreaper, die_with_parent, kill_descendants

_POLL_S = 0.2  # only where pidfds are missing (not Linux >= 5.3)


def forget_forkserver_pipe() -> None:
    """Close this process's copy of the template's alive pipe, so that the template exits as soon
    as the driver does (no-op outside a forkserver child)."""
    from multiprocessing import forkserver

    server = forkserver._forkserver  # type: ignore[attr-defined]
    fd = getattr(server, "_forkserver_alive_fd", None)
    if fd is not None:
        with contextlib.suppress(OSError):
            os.close(fd)
        server._forkserver_alive_fd = None


def run_watched(driver_pid: int, body: Callable[[], None], close_in_watchdog: Callable[[], None]) -> NoReturn:
    """Fork ``body`` under this process (see the module docstring); never returns.

    ``close_in_watchdog`` releases what only the body uses (the outcome pipe), once forked.
    """
    driver = _pidfd(driver_pid)
    if driver is None and not _alive(driver_pid):
        os._exit(1)
    become_subreaper()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            if driver is not None:
                os.close(driver)
            die_with_parent()
            body()
            code = 0
        finally:
            os._exit(code)
    close_in_watchdog()
    status = _wait(pid, driver, driver_pid)
    kill_descendants()
    _exit_as(status)


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _wait(pid: int, driver: int | None, driver_pid: int) -> int | None:
    """The body's wait status, or None when the driver died first."""
    body = _pidfd(pid)
    watched = [fd for fd in (driver, body) if fd is not None]
    timeout = None if driver is not None and body is not None else _POLL_S
    while True:
        try:
            ready = select.select(watched, [], [], timeout)[0]
        except InterruptedError:  # pragma: no cover - retried by Python since 3.5
            continue
        if driver is not None and driver in ready or driver is None and not _alive(driver_pid):
            return None
        if body is None or body in ready:
            done, status = os.waitpid(pid, 0 if body is not None else os.WNOHANG)
            if done:
                return status


def _exit_as(status: int | None) -> NoReturn:
    if status is None:
        os._exit(1)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        with contextlib.suppress(OSError, ValueError):  # SIGKILL and SIGSTOP have no handler to reset
            signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
        os._exit(128 + number)
    os._exit(os.waitstatus_to_exitcode(status))

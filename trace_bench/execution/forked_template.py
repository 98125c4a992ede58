"""The job template forked from the driver (a zygote), so that it shares what the driver imported.

``multiprocessing``'s forkserver starts its template as a fresh interpreter, which imports again
what the driver already holds: pydantic, the config and store models, the LLM layer (about 330 of
the ~510 modules of a stub run's template, 0.2-0.3 s of CPU on every run).  :func:`start` makes the
same template (the same ``forkserver.main`` loop, preloads and reaper) by ``fork`` of the driver
instead, once the driver has imported those, and registers it where ``ensure_running`` looks, so
the standard client code forks every job from it unchanged.

The child is made to look like the fresh interpreter it replaces: only stdio, the listener and the
alive pipe stay open (``spawnv_passfds`` closes every other descriptor), signal handlers the driver
set are reset as ``exec`` would (SIGINT back to Python's default), the driver's ``atexit`` handlers
are dropped, multiprocessing's per-process state is reset, and ``sys.argv`` is ``['-c']`` as in the
spawned one.  It never returns into the driver's code: it exits with ``os._exit`` after the exit
handlers a normal exit would run (the reaper's).

Forking is only correct from a driver with one thread (a fork copies no other thread, and a lock
another thread held would stay held) and whose string hashes are the template's: jobs build
prompts by iterating sets, whose order depends on the hash seed, so the template must have
``PYTHONHASHSEED=0`` as the spawned one gets (``execution.local.job_context``).  :func:`possible`
says whether both hold; otherwise the caller spawns the template as before.
``TRACE_BENCH_FORK_TEMPLATE=0`` turns the fork off (the spawned template then), for comparison.
"""

from __future__ import annotations

import atexit
import os
import signal
import socket
import sys
import traceback
from collections.abc import Callable
from typing import Any

from trace_bench._util.hash_seed import FORK_SWITCH as SWITCH  # "0": always spawn the template


def possible() -> bool:
    """Whether this process may fork the job template: Linux's ``fork``, one thread, the hash seed
    fixed to 0 for this interpreter (``PYTHONHASHSEED=0`` at its start) and for its children, and the
    fork not turned off by :data:`SWITCH`."""
    return (hasattr(os, "fork") and sys.platform.startswith("linux") and os.environ.get(SWITCH, "1") != "0"
            and sys.flags.hash_randomization == 0 and os.environ.get("PYTHONHASHSEED") == "0"
            and _one_thread())


def _one_thread() -> bool:
    """Whether this process has a single thread, native ones counted (a Ray worker's C++ threads
    are not in ``threading``'s count)."""
    try:
        return len(os.listdir("/proc/self/task")) == 1
    except OSError:
        return False


def start(reset: Callable[[], None] = lambda: None) -> None:
    """Fork the forkserver template from this process, importing the preloads set on the context
    (``set_forkserver_preload``) in it, as ``forkserver.ensure_running`` does in a fresh interpreter;
    ``reset`` runs first in the child (the caller's per-process state back to a fresh interpreter's).
    A running template is kept."""
    from multiprocessing import connection, forkserver, resource_tracker, util

    server: Any = forkserver._forkserver  # CPython's private forkserver state, as ensure_running uses it
    with server._lock:
        resource_tracker.ensure_running()
        if server._forkserver_pid is not None:
            pid, _ = os.waitpid(server._forkserver_pid, os.WNOHANG)
            if not pid:
                return
            os.close(server._forkserver_alive_fd)
            server._forkserver_address = server._forkserver_alive_fd = server._forkserver_pid = None
        with socket.socket(socket.AF_UNIX) as listener:
            address = connection.arbitrary_address("AF_UNIX")  # type: ignore[attr-defined]
            listener.bind(address)
            if not util.is_abstract_socket_namespace(address):
                os.chmod(address, 0o600)
            listener.listen()
            alive_r, alive_w = os.pipe()
            try:
                for stream in (sys.stdout, sys.stderr):  # what is buffered is the driver's to write, once
                    if stream is not None:
                        stream.flush()
                pid = os.fork()
                if pid == 0:
                    _template(listener.fileno(), alive_r, list(server._preload_modules or ()), reset)
            except BaseException:
                os.close(alive_w)
                raise
            finally:
                os.close(alive_r)
            server._forkserver_address = address
            server._forkserver_alive_fd = alive_w
            server._forkserver_pid = pid


def _template(listener_fd: int, alive_r: int, preload: list[str], reset: Callable[[], None]) -> None:
    """The forked child: made fresh, then the standard template loop; never returns."""
    code = 1
    try:
        _as_fresh_interpreter((listener_fd, alive_r))
        reset()
        from multiprocessing import forkserver

        forkserver.main(listener_fd, alive_r, preload)
        code = 0
    except SystemExit as exc:  # the loop's exit when the driver is gone
        code = exc.code if isinstance(exc.code, int) else 0 if exc.code is None else 1
    except BaseException:  # noqa: BLE001 - reported as the spawned template's traceback would be
        traceback.print_exc()
    finally:
        try:
            atexit._run_exitfuncs()  # the reaper's: every job's processes go down with the template
            for stream in (sys.stdout, sys.stderr):
                if stream is not None:
                    stream.flush()
        finally:
            os._exit(code)


def _as_fresh_interpreter(keep: tuple[int, ...]) -> None:
    """What differs between a forked driver and ``python -c 'from multiprocessing.forkserver ...'``."""
    from multiprocessing import forkserver, process, resource_tracker, util

    low = 3
    for fd in sorted(keep):  # the spawned template inherits stdio and the passed descriptors only
        os.closerange(low, fd)
        low = fd + 1
    os.closerange(low, os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 1 << 16)
    signal.set_wakeup_fd(-1)
    for number in signal.valid_signals():  # exec resets caught signals; ignored ones stay ignored
        try:
            handler = signal.getsignal(number)
        except (OSError, ValueError):
            continue
        if callable(handler) and handler is not signal.default_int_handler:
            signal.signal(number, signal.default_int_handler if number == signal.SIGINT else signal.SIG_DFL)
    atexit._clear()
    atexit.register(util._exit_function)  # type: ignore[attr-defined]  # as multiprocessing.util's import does
    server: Any = forkserver._forkserver
    server.__init__()  # no template known, no lock held
    tracker: Any = resource_tracker._resource_tracker
    tracker.__init__()  # none of its own: jobs are handed the driver's
    process._children.clear()  # type: ignore[attr-defined]
    sys.argv = ["-c"]  # as the spawned template's (``execution.reaper`` recognises the template by it)

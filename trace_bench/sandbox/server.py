"""The caller's handle on zygote processes (one per process and network setting).

A zygote is started lazily on the first sandboxed call of a process, so listing tasks or
building problems never pays for it; the cost (~0.1-0.2 s: a bare interpreter plus numpy) is
paid once per process.  Handles are safe to share between threads (one request at a time on
the control socket; waiting for results happens outside the lock) and are dropped in forked
children, which must start their own.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import pickle
import socket
import subprocess
import sys
import threading
import time
from typing import Any

from trace_bench.sandbox.child import HEADER
from trace_bench.sandbox.zygote import PID, recv_exact

_BOOT = ("import sys, json; sys.path[:] = json.loads(sys.argv[3]); "
         "from trace_bench.sandbox.zygote import main; main()")
# The zygote and its children see only these variables: no API keys, no proxies, no PYTHON* knobs.
_KEEP_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "HOME", "SYSTEMROOT")
_FIXED_ENV = {"PYTHONHASHSEED": "0", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
              "MKL_NUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1"}
START_TIMEOUT_S = 60.0
LAUNCH_TIMEOUT_S = 30.0


class ZygoteUnavailable(RuntimeError):
    """The zygote could not be started or stopped answering; callers fall back to a plain fork."""


def zygote_environment() -> dict[str, str]:
    env = {key: os.environ[key] for key in _KEEP_ENV if key in os.environ}
    env.update(_FIXED_ENV)
    return env


class ZygoteHandle:
    """A started zygote: its process, the control socket, and what it reported at start-up."""

    def __init__(self, network: bool) -> None:
        self.network = network
        self.lock = threading.Lock()
        self.info: dict[str, Any] = {}
        parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            paths = json.dumps([p for p in sys.path if isinstance(p, str)])
            self.proc = subprocess.Popen(
                [sys.executable, "-S", "-c", _BOOT, str(child.fileno()), "1" if network else "0", paths],
                pass_fds=(child.fileno(),), env=zygote_environment(), stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, close_fds=True,
            )
        except OSError as exc:
            parent.close()
            raise ZygoteUnavailable(f"cannot start the sandbox zygote: {exc}") from exc
        finally:
            child.close()
        self.sock = parent
        try:
            parent.settimeout(START_TIMEOUT_S)
            (length,) = HEADER.unpack(recv_exact(parent, HEADER.size))
            self.info = pickle.loads(recv_exact(parent, length))
            parent.settimeout(LAUNCH_TIMEOUT_S)
        except (OSError, EOFError, pickle.UnpicklingError) as exc:
            self.close()
            raise ZygoteUnavailable(f"the sandbox zygote did not start: {exc}") from exc
        self.owner_pid = os.getpid()

    def launch(self, body: bytes, fds: list[int]) -> int:
        """Hand one pickled request to the zygote; returns the child's pid (= its process group)."""
        with self.lock:
            try:
                socket.send_fds(self.sock, [HEADER.pack(len(body))], fds)
                self.sock.sendall(body)
                (pid,) = PID.unpack(recv_exact(self.sock, PID.size))
            except (OSError, EOFError) as exc:
                self.close()
                raise ZygoteUnavailable(f"the sandbox zygote stopped answering: {exc}") from exc
        if pid <= 0:
            raise ZygoteUnavailable("the sandbox zygote refused a request")
        return pid

    @property
    def alive(self) -> bool:
        return self.sock.fileno() >= 0 and self.proc.poll() is None

    def close(self, wait_s: float = 2.0) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
        try:
            self.proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(timeout=wait_s)


_LOCK = threading.Lock()
_HANDLES: dict[bool, ZygoteHandle] = {}
_ABANDONED: list[ZygoteHandle] = []  # inherited by a fork: never waited on or collected there
_FAILED_AT: dict[bool, float] = {}
RETRY_AFTER_S = 60.0  # after a failed start, callers use the fork fallback instead of retrying each call


def get_zygote(network: bool) -> ZygoteHandle:
    with _LOCK:
        handle = _HANDLES.get(network)
        if handle is not None and handle.alive and handle.owner_pid == os.getpid():
            return handle
        if handle is not None:
            handle.close(wait_s=0.5)
            del _HANDLES[network]
        failed_at = _FAILED_AT.get(network)
        if failed_at is not None and time.monotonic() - failed_at < RETRY_AFTER_S:
            raise ZygoteUnavailable("the sandbox zygote failed to start recently")
        try:
            handle = ZygoteHandle(network)
        except ZygoteUnavailable:
            _FAILED_AT[network] = time.monotonic()
            raise
        _FAILED_AT.pop(network, None)
        _HANDLES[network] = handle
        return handle


def discard(handle: ZygoteHandle) -> None:
    with _LOCK:
        if _HANDLES.get(handle.network) is handle:
            del _HANDLES[handle.network]
    handle.close(wait_s=0.5)


def shutdown() -> None:
    """Stop this process's zygotes (also registered with atexit)."""
    with _LOCK:
        handles = list(_HANDLES.values())
        _HANDLES.clear()
    for handle in handles:
        handle.close()


def _forget_in_child() -> None:
    global _LOCK
    _LOCK = threading.Lock()  # another thread may have held it at the fork
    _FAILED_AT.clear()
    for handle in _HANDLES.values():
        with contextlib.suppress(OSError):
            handle.sock.close()  # our copy only: the zygote keeps serving the parent
        _ABANDONED.append(handle)
    _HANDLES.clear()


atexit.register(shutdown)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)

"""The job process's handles on its sandboxes (zygotes), started lazily and kept per process.

A handle is one zygote: in the ``bwrap`` mode inside bubblewrap (through :mod:`.launcher` when
the job runs as root), in the ``weak`` mode a plain child process with a scrubbed environment.
Which host paths a bwrap sandbox sees is fixed when it starts, so handles are keyed by the
top-level packages they expose; a call that needs a package no handle has starts one that
has all of them.  Handles are shared by threads (one request at a time on the control
socket; results are awaited outside the lock) and dropped in forked children, which start
their own.  Starting costs ~0.1-0.3 s (an interpreter plus numpy), once per job process.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import queue
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from trace_bench._util.errors import TraceBenchError
from trace_bench.sandbox import codec, policy
from trace_bench.sandbox.frames import recv_frame, send_frame

_BOOT = ("import sys, json; sys.path[:] = json.loads(sys.argv[2])['sys_path']; "
         "from trace_bench.sandbox.zygote import main; main()")
_LAUNCH = "import sys; sys.path[:0] = {paths!r}; from trace_bench.sandbox.launcher import main; main()"
START_TIMEOUT_S = 60.0
LAUNCH_TIMEOUT_S = 30.0
RETRY_AFTER_S = 60.0  # after a failed start, calls fail fast instead of retrying each time


T = TypeVar("T")


class ZygoteUnavailable(TraceBenchError, RuntimeError):
    """The sandbox could not be started (the message says why) or stopped answering."""



def _commands(mode: str, packages: frozenset[str], control_fd: int,
              scratch: str | None = None) -> list[tuple[str, list[str]]]:
    """(label, argv) to try in order until one starts; the zygote talks on ``control_fd``.
    ``scratch``: the weak mode's temporary directory (see :class:`ZygoteHandle`)."""
    if mode != "bwrap":
        config = json.dumps({"strong": False, "sys_path": policy.import_path(), "scratch": scratch})
        return [("weak", [sys.executable, "-S", "-c", _BOOT, str(control_fd), config])]
    bwrap = policy.find_bwrap()
    if bwrap is None:
        raise ZygoteUnavailable("bubblewrap (bwrap) is not installed")
    sandbox = policy.sandbox_view(packages)
    under_tmp = [bind.dest for bind in sandbox.all_binds if policy.under_call_tmp(bind.dest)]
    config = json.dumps({"strong": True, "sys_path": policy.import_path(), "tmp_paths": under_tmp})
    zygote = [sys.executable, "-S", "-c", _BOOT, str(control_fd), config]
    attempts: list[tuple[str, list[str]]] = []
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        staged = sandbox.with_sources([f"@src:{index}" for index in range(len(sandbox.all_binds))])
        spec = {"uid": policy.sandbox_uid(), "gid": policy.sandbox_uid(),
                "sources": [b.source for b in sandbox.all_binds], "argv": policy.bwrap_argv(bwrap, staged, zygote)}
        launcher = [sys.executable, "-S", "-c", _LAUNCH.format(paths=policy.import_path()), json.dumps(spec)]
        attempts.append(("bwrap, unprivileged uid", launcher))
    attempts.append(("bwrap", policy.bwrap_argv(bwrap, sandbox, zygote)))
    return attempts


class ZygoteHandle:
    """A started zygote: its process, the control socket, and what it reported at start-up."""

    def __init__(self, mode: str, packages: frozenset[str]) -> None:
        self.mode = mode
        self.packages = packages
        self.lock = threading.Lock()
        self.active = 0  # calls under way (server._LOCK guards it)
        self.retired = False  # superseded by a sandbox that shows more: stops with its last call
        self.info: dict[str, Any] = {}
        self.owner_pid = os.getpid()
        # The weak mode has no private /tmp: its calls' work directories (and whatever a candidate
        # writes through ``tempfile``) go in one directory of its own, removed when it stops.  Per
        # call they were left behind by every spare call made ahead and never used.
        self.scratch = tempfile.mkdtemp(prefix="trace-bench-sandbox-") if mode != "bwrap" else None
        reasons: list[str] = []
        attempt = 0
        while True:
            parent, child = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
            try:
                commands = _commands(mode, packages, child.fileno(), self.scratch)
            except ZygoteUnavailable:
                parent.close()
                child.close()
                self._remove_scratch()
                raise
            label, argv = commands[attempt]
            try:
                self._start(argv, parent, child)
            except ZygoteUnavailable as exc:
                reasons.append(f"{label}: {exc}")
                attempt += 1
                if attempt == len(commands):
                    self._remove_scratch()
                    raise ZygoteUnavailable("; ".join(reasons)) from exc
                continue
            self.info["variant"] = label
            break

    def _start(self, argv: list[str], parent: socket.socket, child: socket.socket) -> None:
        """Start one command line; its stderr is read only to explain a failed start."""
        try:
            self.proc = _starter().run(lambda: subprocess.Popen(
                argv, pass_fds=(child.fileno(),), env=dict(policy.ENVIRONMENT), cwd="/", stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=subprocess.PIPE))
        except OSError as exc:
            parent.close()
            raise ZygoteUnavailable(f"cannot start: {exc}") from exc
        finally:
            child.close()
        self.sock = parent
        assert self.proc.stderr is not None
        try:
            parent.settimeout(START_TIMEOUT_S)
            body, _ = recv_frame(parent)
            hello = codec.decode(body)
            if not (isinstance(hello, dict) and hello.get("ok")):
                error = hello.get("error") if isinstance(hello, dict) else None
                raise ZygoteUnavailable(str(error) if error else f"unexpected greeting {str(hello)[:200]}")
            self.info = dict(hello.get("info") or {})
            parent.settimeout(LAUNCH_TIMEOUT_S)
        except (OSError, EOFError, codec.CodecError, ZygoteUnavailable) as exc:
            parent.close()
            try:
                self.proc.wait(timeout=2.0)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            detail = self.proc.stderr.read().decode("utf-8", "replace").strip()
            self.proc.stderr.close()
            if isinstance(exc, ZygoteUnavailable):
                raise
            raise ZygoteUnavailable(detail.splitlines()[-1] if detail else f"did not start ({exc})") from exc
        # Kept open (a closed pipe could SIGPIPE bubblewrap); the zygote itself writes to /dev/null from now on.

    def take_spare(self, target: str, sys_path: list[str]) -> tuple[int, socket.socket, socket.socket]:
        """A call's processes made ahead of time: (supervisor pid, socket to it, socket to the child).

        The zygote only learns which module to warm; the caller sends the request to the child and
        the limits to the supervisor itself (see :mod:`.runner`), and closes both sockets.
        """
        with self.lock:
            try:
                send_frame(self.sock, codec.encode({"target": target, "sys_path": sys_path}))
                body, fds = recv_frame(self.sock, max_fds=2)
                reply = codec.decode(body)
            except (OSError, EOFError, codec.CodecError) as exc:
                self.close()
                raise ZygoteUnavailable(f"the sandbox stopped answering: {exc}") from exc
        pid = reply.get("pid") if isinstance(reply, dict) else None
        if not isinstance(pid, int) or pid <= 0 or len(fds) != 2:
            for fd in fds:
                os.close(fd)
            raise ZygoteUnavailable("the sandbox refused a request")
        return pid, socket.socket(fileno=fds[0]), socket.socket(fileno=fds[1])

    @property
    def alive(self) -> bool:
        return self.sock.fileno() >= 0 and self.proc.poll() is None

    def close(self, wait_s: float = 2.0) -> None:
        with contextlib.suppress(OSError):
            self.sock.close()
        try:
            self.proc.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            self.kill()
        self._release_if_ended()

    def kill(self) -> None:
        """End the sandbox at once: bubblewrap's death takes its whole PID namespace with it."""
        with contextlib.suppress(OSError):
            self.sock.close()
        with contextlib.suppress(OSError):
            self.proc.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.proc.wait(timeout=10)
        self._release_if_ended()

    def _release_if_ended(self) -> None:
        """Once the sandbox has exited: close the pipe of its stderr and remove its scratch."""
        if self.proc.returncode is not None:
            if self.proc.stderr is not None:
                self.proc.stderr.close()
            self._remove_scratch()

    def _remove_scratch(self) -> None:
        """Only by the process that made it: a forked child's copy of the handle is not its owner."""
        if self.scratch is not None and os.getpid() == self.owner_pid:
            shutil.rmtree(self.scratch, ignore_errors=True)
            self.scratch = None


class _Starter:
    """One thread, alive as long as this process, that starts every sandbox.

    Why: bubblewrap's ``--die-with-parent`` (and the launcher's death signal) follow the *thread*
    that started it, not the process, so a sandbox started by a trainer's worker thread died when
    that thread ended, under the calls of every other thread.  Started here, a sandbox lives as
    long as the job process and still dies with it.
    """

    def __init__(self) -> None:
        self.requests: queue.SimpleQueue[tuple[Callable[[], Any], list[Any], threading.Event]] = queue.SimpleQueue()
        self.thread = threading.Thread(target=self._serve, name="trace-bench-sandbox-starter", daemon=True)
        self.thread.start()

    def _serve(self) -> None:
        while True:
            start, outcome, done = self.requests.get()
            try:
                outcome.append((True, start()))
            except BaseException as exc:  # noqa: B036 - handed back to the caller's thread
                outcome.append((False, exc))
            done.set()

    def run(self, start: Callable[[], T]) -> T:
        if threading.current_thread() is self.thread:
            return start()
        outcome: list[Any] = []
        done = threading.Event()
        self.requests.put((start, outcome, done))
        done.wait()
        succeeded, value = outcome[0]
        if not succeeded:
            raise value
        return value


_STARTER: _Starter | None = None
_STARTER_LOCK = threading.Lock()


def _starter() -> _Starter:
    global _STARTER
    with _STARTER_LOCK:
        if _STARTER is None or not _STARTER.thread.is_alive():
            _STARTER = _Starter()
        return _STARTER


_LOCK = threading.Lock()
_HANDLES: list[ZygoteHandle] = []
_FAILED: dict[str, tuple[float, str]] = {}  # mode -> (when, why)


def get_zygote(mode: str, packages: frozenset[str]) -> ZygoteHandle:
    """A running sandbox that shows ``packages``, counted as busy until :func:`release`.

    A sandbox's view is fixed when it starts, so a call that needs more starts one that shows
    everything the process's sandboxes showed so far; the ones it supersedes take no new call and
    stop when their last call ends, so a job keeps one sandbox per mode and per set of hidden
    packages (a candidate's sandbox may hide what its checker's shows, :data:`.policy.HIDE_PREFIX`).
    """
    superseded: list[ZygoteHandle] = []
    with _LOCK:
        for handle in list(_HANDLES):
            if not (handle.alive and handle.owner_pid == os.getpid()):
                _HANDLES.remove(handle)
                if handle.owner_pid == os.getpid():
                    handle.close(wait_s=0.5)
            elif handle.mode == mode and packages <= handle.packages and \
                    policy.hidden_names(handle.packages) == policy.hidden_names(packages):
                handle.active += 1
                return handle
        failed = _FAILED.get(mode)
        if failed is not None and time.monotonic() - failed[0] < RETRY_AFTER_S:
            raise ZygoteUnavailable(failed[1])
        known = [h for h in _HANDLES if h.mode == mode and policy.hidden_names(h.packages) == policy.hidden_names(packages)]
        try:
            handle = ZygoteHandle(mode, packages.union(*(h.packages for h in known)))
        except ZygoteUnavailable as exc:
            _FAILED[mode] = (time.monotonic(), str(exc))
            raise
        _FAILED.pop(mode, None)
        if handle.scratch is not None:
            _clean_at_job_exit()
        for old in known:
            _HANDLES.remove(old)
            old.retired = True
            if old.active == 0:
                superseded.append(old)
        _HANDLES.append(handle)
        handle.active += 1
    for old in superseded:
        old.close(wait_s=0.5)
    return handle


def release(handle: ZygoteHandle) -> None:
    """A call of ``handle`` ended; a superseded sandbox stops with its last call."""
    with _LOCK:
        handle.active = max(0, handle.active - 1)
        stop = handle.retired and handle.active == 0
    if stop:
        handle.close(wait_s=0.5)


def discard(handle: ZygoteHandle, *, kill: bool = False) -> None:
    with _LOCK:
        if handle in _HANDLES:
            _HANDLES.remove(handle)
    if kill:
        handle.kill()
    else:
        handle.close(wait_s=0.5)


def shutdown() -> None:
    """Stop this process's sandboxes (also registered with atexit)."""
    with _LOCK:
        handles = [h for h in _HANDLES if h.owner_pid == os.getpid()]
        _HANDLES.clear()
        _FAILED.clear()
    for handle in handles:
        handle.close()


_EXIT_HOOK_PID = 0


def _clean_at_job_exit() -> None:
    """Remove this process's weak sandboxes' scratch directories when a job process ends, too
    (called under ``_LOCK``).

    A job ends with ``os._exit``, which skips ``atexit`` but first runs multiprocessing's
    finalizers of non-negative priority (:mod:`trace_bench.execution.local`); without this, a weak
    sandbox's scratch directory outlived every job.  The sandbox is killed, not asked to stop: the
    job's slot is free only once its process is gone, and the sandbox would die with it anyway."""
    global _EXIT_HOOK_PID
    if _EXIT_HOOK_PID != os.getpid():
        from multiprocessing import util

        _EXIT_HOOK_PID = os.getpid()
        util.Finalize(None, _kill_weak_sandboxes, exitpriority=10)


def _kill_weak_sandboxes() -> None:
    with _LOCK:
        handles = [h for h in _HANDLES if h.owner_pid == os.getpid() and h.scratch is not None]
    for handle in handles:
        handle.kill()


def _forget_in_child() -> None:
    global _LOCK, _STARTER, _STARTER_LOCK
    _LOCK = threading.Lock()  # another thread may have held it at the fork
    _STARTER, _STARTER_LOCK = None, threading.Lock()  # threads do not survive a fork
    for handle in _HANDLES:
        with contextlib.suppress(OSError):
            handle.sock.close()  # our copy only: the sandbox keeps serving the parent
    _HANDLES.clear()
    _FAILED.clear()


atexit.register(shutdown)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)

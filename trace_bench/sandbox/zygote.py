"""The zygote: a warm Python inside the sandbox that makes one supervised process pair per call.

Started once per job process (by :mod:`.server`), inside bubblewrap in the strong mode.  It
imports numpy and each target's module once, so a call costs forks rather than an interpreter
start, and it keeps one call's processes made in advance (a *spare*: the supervisor has already
entered the call's namespaces and forked the child, which waits for its request), so that the
namespace set-up is off the critical path.

The zygote never sees a request's payload or its file descriptors: it hands a spare's two
sockets to the job, and the job sends the request to the spare's child and the limits to its
supervisor itself.  So every call runs in a process made from a state that has never held an
earlier call's payload (a checker's hidden tests, a reference, data) on its heap or in a frame,
and a spare keeps no descriptor but its own two sockets (none of another spare's, none of the
zygote's).  Protocol on the control socket (a socketpair with the job process), framed by
:mod:`.frames`:

- at start the zygote sends one frame, ``{"ok": true, "info": {...}}``;
- the job asks for a spare with one frame, the :mod:`.codec` encoding of ``{"target", "sys_path"}``
  (what to import, so that later spares start with the target's module loaded);
- the zygote answers ``{"pid": <the spare's supervisor>}`` with two descriptors (SCM_RIGHTS): a
  socket to the supervisor and a socket to the child (see :mod:`.runner` for what goes on them),
  or ``{"pid": -1}`` and none for a malformed request.

The zygote holds no secret (its environment is :data:`.policy.ENVIRONMENT`) and makes itself
non-dumpable, so a call cannot ptrace it or read its file descriptors.  It exits when the job
process closes the socket, killing every supervisor still running.
"""

from __future__ import annotations

import contextlib
import gc
import importlib
import json
import os
import select
import signal
import socket
import sys
from dataclasses import dataclass
from typing import Any

from trace_bench.sandbox import codec, linux, policy
from trace_bench.sandbox.frames import recv_frame, send_frame
from trace_bench.sandbox.supervisor import prepare_call

SPARES = 2  # calls prepared ahead; two let back-to-back calls overlap one's set-up with another's run


@dataclass
class Spare:
    """A call's processes made ahead of its request: the supervisor's pid and a socket to each."""

    pid: int
    supervisor: socket.socket
    child: socket.socket

    def close(self) -> None:
        self.supervisor.close()
        self.child.close()


class Zygote:
    def __init__(self, sock: socket.socket, strong: bool, tmp_paths: list[str]) -> None:
        self.sock = sock
        self.strong = strong
        self.tmp_paths = tmp_paths
        self.children: set[int] = set()
        self.warm: set[str] = set()
        self.spares: list[Spare] = []
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)

    def warm_module(self, target: str) -> None:
        """Import a target's module here once, so that every later call inherits it loaded."""
        module_name = target.partition(":")[0]
        if module_name in self.warm:
            return
        try:
            importlib.import_module(module_name)
        except ModuleNotFoundError:  # a call reports it; the path may be visible to a later request
            return
        except Exception:  # a broken module: each call reports its own import error
            pass
        self.warm.add(module_name)
        _freeze()

    def make_spare(self) -> Spare:
        to_supervisor, supervisor_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        to_child, child_end = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        pid = os.fork()
        if pid == 0:
            try:
                signal.set_wakeup_fd(-1)
                for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM):
                    signal.signal(sig, signal.SIG_DFL)
                close_fds_except((0, 1, 2, supervisor_end.fileno(), child_end.fileno()))
            except BaseException:
                os._exit(71)
            prepare_call(supervisor_end, child_end, strong=self.strong, tmp_paths=self.tmp_paths)
        supervisor_end.close()
        child_end.close()
        self.children.add(pid)
        return Spare(pid, to_supervisor, to_child)

    def hand_out(self, request: dict[str, Any]) -> Spare:
        """A spare for the request's target (made now if there is none); its module is warmed for later spares."""
        if request.get("sys_path"):
            sys.path[:] = [p for p in request["sys_path"] if isinstance(p, str)]
        self.warm_module(str(request.get("target", "")))
        return self.spares.pop(0) if self.spares else self.make_spare()

    def reap(self) -> None:
        while self.children:
            try:
                pid, _status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            self.children.discard(pid)

    def serve(self) -> None:
        signal.signal(signal.SIGCHLD, lambda *_: None)
        signal.set_wakeup_fd(self.wake_w)
        self.spares = [self.make_spare() for _ in range(SPARES)]
        try:
            while True:
                watched: list[socket.socket | int] = [self.sock, self.wake_r]
                ready, _, _ = select.select(watched, [], [])
                if self.wake_r in ready:
                    with contextlib.suppress(BlockingIOError):
                        os.read(self.wake_r, 4096)
                    self.reap()
                if self.sock in ready:
                    try:
                        body, _ = recv_frame(self.sock)
                    except (EOFError, OSError):
                        return
                    try:
                        request = codec.decode(body)
                    except codec.CodecError:
                        request = None
                    if not isinstance(request, dict):
                        send_frame(self.sock, codec.encode({"pid": -1}))
                        continue
                    spare = self.hand_out(request)
                    try:
                        send_frame(self.sock, codec.encode({"pid": spare.pid}),
                                   [spare.supervisor.fileno(), spare.child.fileno()])
                    finally:
                        spare.close()  # the job holds them now; a spare it never used ends on EOF
                    while len(self.spares) < SPARES:
                        self.spares.append(self.make_spare())
        finally:  # the job is gone or closed the socket: end every call still running
            for pid in list(self.children):  # supervisors lead no group; each takes its call down with it
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            for pid in list(self.children):
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, 0)


def close_fds_except(keep: tuple[int, ...]) -> None:
    """Close every descriptor of this process but ``keep``: a spare inherits none of the zygote's
    (its control socket, the other spares' sockets), so no call can reach another call or the job."""
    limit = os.sysconf("SC_OPEN_MAX") if hasattr(os, "sysconf") else 1 << 16
    low = 0
    for high in [*sorted(set(keep)), max(limit, max(keep) + 1)]:
        if low < high:  # closerange(n, n) would close everything: it asks close_range(n, n - 1)
            os.closerange(low, high)
        low = high + 1


def _freeze() -> None:
    """Move everything loaded so far out of the collector's reach: a forked call's collections then do
    not touch (and copy-on-write) the pages it shares with the zygote."""
    gc.collect()
    gc.freeze()


def _probe_call_namespaces() -> str:
    """Why calls could not get namespaces of their own here (e.g. a security module refuses user
    namespaces nested in bubblewrap); "" when they can.  Checked once, so that the sandbox is refused
    at start-up with the reason rather than every call failing later."""
    pid = os.fork()
    if pid == 0:
        try:
            uid, gid = os.getuid(), os.getgid()
            linux.unshare(policy.CALL_NAMESPACES)
            linux.map_own_ids(uid, gid)
            os._exit(0)
        except BaseException:  # noqa: B036
            os._exit(1)
    _, status = os.waitpid(pid, 0)
    return "" if status == 0 else "calls cannot get user, mount, PID and IPC namespaces of their own inside bubblewrap"


def _weak_network_isolation() -> bool:
    """Weak mode only: a private network namespace for the zygote and its calls, where allowed."""
    for flags in (linux.CLONE_NEWNET, linux.CLONE_NEWUSER | linux.CLONE_NEWNET):
        try:
            linux.unshare(flags)
            return True
        except OSError:
            continue
    return False


def main() -> None:
    """Entry point: ``python -S -c BOOT <control fd> <config json>`` (see :mod:`.server`)."""
    fd, config = int(sys.argv[1]), json.loads(sys.argv[2])
    strong = bool(config["strong"])
    if config.get("scratch"):  # the weak mode: every temporary file of its calls goes in the job's scratch
        import tempfile

        tempfile.tempdir = str(config["scratch"])
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the job; we follow its socket
    sock = socket.socket(fileno=fd)
    info: dict[str, Any] = {"uid": os.getuid(), "numpy": False, "network_namespace": strong}
    try:
        import numpy  # noqa: F401 - the evaluators' only heavy dependency, loaded once here
        import numpy.random  # noqa: F401 - numpy 2 loads it lazily, ~35 ms that every seeding call would pay

        info["numpy"] = True
    except ImportError:
        pass
    if strong:
        problem = _probe_call_namespaces()
        if problem:
            send_frame(sock, codec.encode({"ok": False, "error": problem}))
            return
    if linux.is_linux():
        from trace_bench.sandbox.child import seccomp_filter

        for network in (False, True):  # built here once, so that no call pays for it
            for processes in (False, True):
                info["seccomp"] = seccomp_filter(network, processes, True) is not None
        import trace_bench.sandbox.refusals  # noqa: F401 - each call's supervisor and child use it
        if not strong:
            import trace_bench.sandbox.guard  # noqa: F401 - the weak mode's audit hook, loaded once here

            info["network_namespace"] = _weak_network_isolation()
        with contextlib.suppress(OSError):
            linux.set_dumpable(False)
    send_frame(sock, codec.encode({"ok": True, "info": info}))
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 2)  # the job stops reading our stderr once we said hello
    os.close(null)
    _freeze()
    Zygote(sock, strong, [str(p) for p in config.get("tmp_paths", [])]).serve()

"""The zygote: a warm Python inside the sandbox that forks one supervised process per call.

Started once per job process (by :mod:`.server`), inside bubblewrap in the strong mode.  It
imports numpy and each target's module once, so a call costs a fork rather than an interpreter
start.  Protocol on the control socket (a socketpair with the job process):

- at start the zygote sends one frame, ``{"ok": true, "info": {...}}``;
- a request is one frame (4-byte big-endian length, then the :mod:`.codec` encoding of
  ``{"target", "payload", "limits", "sys_path"}``) whose first bytes carry three file descriptors
  (SCM_RIGHTS): the write ends of the call's result and status pipes, the read end of its
  cancel pipe (the job closes the other end to end the call early, or by dying), then the
  ``channels`` the request announces (handed to the target, see :mod:`.rpc`);
- the reply is the supervisor's pid (8 bytes, -1 for a refused request).

The zygote holds no secret (its environment is :data:`.policy.ENVIRONMENT`) and makes itself
non-dumpable, so a call cannot ptrace it or read its file descriptors.  It exits when the job
process closes the socket, killing every supervisor still running.
"""

from __future__ import annotations

import contextlib
import importlib
import json
import os
import select
import signal
import socket
import struct
import sys
from typing import Any

from trace_bench.sandbox import codec, linux
from trace_bench.sandbox.supervisor import supervise

FRAME = struct.Struct(">I")
PID = struct.Struct(">q")
MAX_REQUEST_BYTES = 256 << 20
MAX_CHANNELS = 4


def recv_exact(sock: socket.socket, size: int) -> bytes:
    chunks: list[bytes] = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise EOFError("sandbox control socket closed")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def send_frame(sock: socket.socket, body: bytes, fds: list[int] | None = None) -> None:
    head = FRAME.pack(len(body))
    if fds:
        socket.send_fds(sock, [head], fds)
    else:
        sock.sendall(head)
    sock.sendall(body)


def recv_frame(sock: socket.socket, max_fds: int = 0) -> tuple[bytes, list[int]]:
    if max_fds:
        head, fds, _flags, _addr = socket.recv_fds(sock, FRAME.size, max_fds)
    else:
        head, fds = sock.recv(FRAME.size), []
    if not head:
        for fd in fds:
            os.close(fd)
        raise EOFError("sandbox control socket closed")
    if len(head) < FRAME.size:
        head += recv_exact(sock, FRAME.size - len(head))
    (length,) = FRAME.unpack(head)
    if length > MAX_REQUEST_BYTES:
        raise EOFError(f"sandbox request of {length} bytes is too large")
    return recv_exact(sock, length), list(fds)


class Zygote:
    def __init__(self, sock: socket.socket, strong: bool, tmp_paths: list[str]) -> None:
        self.sock = sock
        self.strong = strong
        self.tmp_paths = tmp_paths
        self.children: set[int] = set()
        self.warm: set[str] = set()
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

    def launch(self, request: dict[str, Any], fds: list[int]) -> int:
        if request.get("sys_path"):
            sys.path[:] = [p for p in request["sys_path"] if isinstance(p, str)]
        self.warm_module(str(request.get("target", "")))
        pid = os.fork()
        if pid == 0:
            try:
                signal.set_wakeup_fd(-1)
                for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM):
                    signal.signal(sig, signal.SIG_DFL)
                for fd in (self.sock.fileno(), self.wake_r, self.wake_w):
                    os.close(fd)
            except BaseException:
                os._exit(71)
            supervise(request, *fds[:3], channels=fds[3:], strong=self.strong, tmp_paths=self.tmp_paths)
        for fd in fds:
            os.close(fd)
        self.children.add(pid)
        return pid

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
        try:
            while True:
                ready, _, _ = select.select([self.sock, self.wake_r], [], [])
                if self.wake_r in ready:
                    with contextlib.suppress(BlockingIOError):
                        os.read(self.wake_r, 4096)
                    self.reap()
                if self.sock in ready:
                    try:
                        body, fds = recv_frame(self.sock, max_fds=3 + MAX_CHANNELS)
                    except (EOFError, OSError):
                        return
                    try:
                        request = codec.decode(body)
                    except codec.CodecError:
                        request = None
                    if not isinstance(request, dict) or len(fds) != 3 + int(request.get("channels") or 0):
                        for fd in fds:
                            os.close(fd)
                        self.sock.sendall(PID.pack(-1))
                        continue
                    self.sock.sendall(PID.pack(self.launch(request, fds)))
        finally:  # the job is gone or closed the socket: end every call still running
            for pid in list(self.children):
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
            for pid in list(self.children):
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, 0)


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
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the job; we follow its socket
    sock = socket.socket(fileno=fd)
    info: dict[str, Any] = {"uid": os.getuid(), "numpy": False, "network_namespace": strong}
    try:
        import numpy  # noqa: F401 - the evaluators' only heavy dependency, loaded once here

        info["numpy"] = True
    except ImportError:
        pass
    if linux.is_linux():
        if not strong:
            info["network_namespace"] = _weak_network_isolation()
        with contextlib.suppress(OSError):
            linux.set_dumpable(False)
    send_frame(sock, codec.encode({"ok": True, "info": info}))
    null = os.open(os.devnull, os.O_RDWR)
    os.dup2(null, 2)  # the job stops reading our stderr once we said hello
    os.close(null)
    Zygote(sock, strong, [str(p) for p in config.get("tmp_paths", [])]).serve()

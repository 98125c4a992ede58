"""The zygote: a small warm process that forks one sandbox child per request.

Why not ``multiprocessing``'s forkserver: there is one forkserver per interpreter, and the job
executor already owns it (with ``opto`` preloaded); a second, independent template with only
numpy and the evaluators keeps sandbox children small (fast fork, no secrets from the job's
memory or environment) and leaves the job template alone.  The zygote is started with a
scrubbed environment, moves itself into a private network namespace once (so every child has
no network for free), and serves requests over a Unix socket pair: a request carries the
result and status pipe ends as ancillary fds; the reply is the child's pid, which is also its
process group id, so the caller can kill the whole group on timeout.  When a child ends, the
zygote writes its wait status and CPU seconds to the status pipe.  The zygote exits when its
caller closes the socket, killing any child still running.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import pickle
import select
import shutil
import signal
import socket
import struct
import sys
from typing import Any

from trace_bench.processes import die_with_parent, kill_process_group
from trace_bench.sandbox.child import HEADER, fork_entry, write_all
from trace_bench.sandbox.guard import isolate_network

STATUS = struct.Struct(">qd")  # wait status, CPU seconds used by the child
PID = struct.Struct(">q")


def recv_exact(sock: socket.socket, size: int) -> bytes:
    chunks: list[bytes] = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise EOFError("sandbox control socket closed")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def recv_request(sock: socket.socket) -> tuple[dict[str, Any], list[int]]:
    """One framed request: an 8-byte length sent together with two fds, then the pickled body."""
    head, fds, _flags, _addr = socket.recv_fds(sock, HEADER.size, 2)
    if not head:
        for fd in fds:
            os.close(fd)
        raise EOFError("sandbox control socket closed")
    if len(head) < HEADER.size:
        head += recv_exact(sock, HEADER.size - len(head))
    (length,) = HEADER.unpack(head)
    body = recv_exact(sock, length)
    try:
        request = pickle.loads(body)
    except Exception:  # plain types only; anything else is refused (empty request, pid -1)
        request = {}
    return request, list(fds)


class Zygote:
    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        self.children: dict[int, int] = {}  # pid -> status pipe write end
        self.workdirs: dict[int, str] = {}  # pid -> its temporary directory (removed here if the caller died)
        self.warm: set[str] = set()
        self.wake_r, self.wake_w = os.pipe()
        os.set_blocking(self.wake_w, False)

    def warm_module(self, target: str) -> None:
        """Import a trusted target's module here once, so every later child inherits it."""
        module_name = target.partition(":")[0]
        if module_name and module_name not in self.warm:
            try:
                importlib.import_module(module_name)
                self.warm.add(module_name)
            except ModuleNotFoundError:  # may appear on a later request's import path
                pass
            except Exception:  # a broken module: let each child report the error itself
                self.warm.add(module_name)

    def launch(self, request: dict[str, Any], result_w: int, status_w: int) -> int:
        if request.get("sys_path"):
            sys.path[:] = list(request["sys_path"])
        self.warm_module(str(request.get("target", "")))
        pid = os.fork()
        if pid == 0:  # child
            try:
                os.setpgid(0, 0)
                signal.set_wakeup_fd(-1)
                for sig in (signal.SIGCHLD, signal.SIGINT, signal.SIGTERM):
                    signal.signal(sig, signal.SIG_DFL)
                die_with_parent()
                for fd in (self.sock.fileno(), self.wake_r, self.wake_w, status_w, *self.children.values()):
                    with contextlib.suppress(OSError):
                        os.close(fd)
            except BaseException:
                os._exit(71)
            fork_entry(request, result_w)
        with contextlib.suppress(OSError):
            os.setpgid(pid, pid)  # also done by the child; whichever runs first wins the race
        os.close(result_w)
        self.children[pid] = status_w
        self.workdirs[pid] = str(request.get("workdir", ""))
        return pid

    def reap(self) -> None:
        while self.children:
            try:
                pid, status, usage = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            status_w = self.children.pop(pid, None)
            self.workdirs.pop(pid, None)
            if status_w is not None:
                with contextlib.suppress(OSError):
                    write_all(status_w, STATUS.pack(status, usage.ru_utime + usage.ru_stime))
                os.close(status_w)

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
                        request, fds = recv_request(self.sock)
                    except (EOFError, OSError):
                        return
                    if len(fds) != 2 or not request:
                        for fd in fds:
                            os.close(fd)
                        self.sock.sendall(PID.pack(-1))
                        continue
                    pid = self.launch(request, fds[0], fds[1])
                    self.sock.sendall(PID.pack(pid))
        finally:  # the caller is gone: nobody else will stop these children or remove their directories
            orphaned = [d for d in self.workdirs.values() if d]
            for pid in list(self.children):
                kill_process_group(pid)
            for pid in list(self.children):
                with contextlib.suppress(ChildProcessError, OSError):
                    os.waitpid(pid, 0)
            for workdir in orphaned:
                shutil.rmtree(workdir, ignore_errors=True)


def main() -> None:
    """Entry point: ``python -S -c '...' <control fd> <network 0|1>`` (see ``runner``)."""
    fd, network = int(sys.argv[1]), sys.argv[2] == "1"
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C reaches the caller; we follow its socket
    sock = socket.socket(fileno=fd)
    info: dict[str, Any] = {"network_namespace": False, "numpy": False}
    try:
        import numpy  # noqa: F401 - the evaluators' only heavy dependency, loaded once here

        info["numpy"] = True
    except ImportError:
        pass
    if not network:
        info["network_namespace"] = isolate_network()
    body = pickle.dumps(info)
    sock.sendall(HEADER.pack(len(body)) + body)
    Zygote(sock).serve()

"""The sandbox's own record of what it refused: seccomp's user notifications, answered by the supervisor.

The call's seccomp filter (:mod:`.seccomp`, ``notify``) does not answer a refused system call
itself: the kernel stops the caller and hands the call to the filter's *listener*, a descriptor the
child makes when it loads the filter and passes to its supervisor before anything of the target
runs.  The supervisor (:mod:`.supervisor`, outside the call's PID namespace, never running its code)
counts each one by name and answers ``EPERM``, what the filter answered before.  So the count is the
sandbox's, not the code's: a refusal that the code catches, retries or hides is counted all the same,
and nothing in the call can reach the record (the listener leaves the child before the target runs).

A system call the listener never answers stays blocked; when the listener goes (the supervisor
ends), the kernel fails the call with ``ENOSYS``.  Calls the filter kills (a foreign architecture)
and ``clone3``'s ``ENOSYS`` (libc then uses ``clone``, whose flags the filter reads) are not refusals.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import socket
import struct
from collections import Counter

from trace_bench.sandbox.seccomp import syscall_names

# ioctl numbers: _IOWR('!', 0, struct seccomp_notif) and _IOWR('!', 1, struct seccomp_notif_resp)
_RECV = 0xC0502100
_SEND = 0xC0182101
_NOTIFICATION = struct.Struct("=QIIiIQ6Q")  # id, pid, flags, then seccomp_data: nr, arch, ip, args[6]
_RESPONSE = struct.Struct("=QqiI")  # id, val, error, flags
_X32_BIT = 0x40000000
MAX_NAMES = 64  # distinct names a report carries; the rest are counted under "other"

NETWORK = frozenset({"socket", "socketpair"})
PROCESS = frozenset({"fork", "vfork", "clone", "execve", "execveat"})


def kind_of(name: str) -> str:
    """The denial kind of a refused system call: ``network``, ``process`` or ``syscall``."""
    return "network" if name in NETWORK else "process" if name in PROCESS else "syscall"


def send_listener(sock: socket.socket, listener: int) -> None:
    """Child side: hand the filter's listener to the supervisor, and keep no copy of either."""
    try:
        socket.send_fds(sock, [b"L"], [listener])
    finally:
        os.close(listener)
        sock.close()


class Record:
    """Supervisor side: receives the listener, answers every refused call and counts it by name."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock: socket.socket | None = sock
        self.listener = -1
        self.counts: Counter[str] = Counter()
        self._names = syscall_names()

    def receive(self) -> int:
        """Take the listener from the child's socket; the listener, or -1 when the child sent none."""
        sock, self.sock = self.sock, None
        if sock is None:
            return -1
        try:
            _data, fds, _flags, _address = socket.recv_fds(sock, 16, 1)
        except OSError:
            fds = []
        finally:
            sock.close()
        self.listener = fds[0] if fds else -1
        return self.listener

    def answer(self) -> bool:
        """Answer one pending refused call (``EPERM``) and count it; False when the listener is done."""
        buffer = bytearray(_NOTIFICATION.size)
        try:
            fcntl.ioctl(self.listener, _RECV, buffer, True)
        except OSError as exc:
            return exc.errno in (errno.ENOENT, errno.EINTR)  # the caller died meanwhile: nothing to answer
        notification_id, _pid, _flags, number, _arch, _ip, *_args = _NOTIFICATION.unpack(buffer)
        name = "x32" if number & _X32_BIT else self._names.get(number, f"syscall {number}")
        if name not in self.counts and len(self.counts) >= MAX_NAMES:
            name = "other"
        self.counts[name] += 1
        with contextlib.suppress(OSError):  # ENOENT: the caller died before the answer
            fcntl.ioctl(self.listener, _SEND, bytearray(_RESPONSE.pack(notification_id, 0, -errno.EPERM, 0)), True)
        return True

    def close(self) -> None:
        if self.sock is not None:
            self.sock.close()
            self.sock = None
        if self.listener >= 0:
            with contextlib.suppress(OSError):
                os.close(self.listener)
            self.listener = -1

    def report(self) -> dict[str, int]:
        return dict(sorted(self.counts.items()))

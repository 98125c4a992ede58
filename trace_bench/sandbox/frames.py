"""Framing for the sandbox's sockets and pipes: a 4-byte big-endian length, then the bytes.

On sockets a frame's first bytes may carry file descriptors (SCM_RIGHTS); that is how the job
hands a call its pipe ends through the zygote.  On pipes (:func:`write_value`, :func:`read_value`)
the bytes are a :mod:`.codec` encoding.  Every reader bounds the length before reading the body.
"""

from __future__ import annotations

import os
import socket
import struct
from typing import Any

from trace_bench.sandbox import codec

LENGTH = struct.Struct(">I")
MAX_SOCKET_FRAME = 256 << 20


def recv_exact(sock: socket.socket, size: int) -> bytes:
    chunks: list[bytes] = []
    while size:
        chunk = sock.recv(min(size, 1 << 20))
        if not chunk:
            raise EOFError("sandbox socket closed")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def send_frame(sock: socket.socket, body: bytes, fds: list[int] | None = None) -> None:
    head = LENGTH.pack(len(body))
    if fds:
        socket.send_fds(sock, [head], fds)
    else:
        sock.sendall(head)
    sock.sendall(body)


def recv_frame(sock: socket.socket, max_fds: int = 0) -> tuple[bytes, list[int]]:
    """One frame and the descriptors that came with it; ``EOFError`` when the peer is gone."""
    if max_fds:
        head, fds, _flags, _addr = socket.recv_fds(sock, LENGTH.size, max_fds)
    else:
        head, fds = sock.recv(LENGTH.size), []
    if not head:
        for fd in fds:
            os.close(fd)
        raise EOFError("sandbox socket closed")
    if len(head) < LENGTH.size:
        head += recv_exact(sock, LENGTH.size - len(head))
    (length,) = LENGTH.unpack(head)
    if length > MAX_SOCKET_FRAME:
        raise EOFError(f"sandbox frame of {length} bytes is too large")
    return recv_exact(sock, length), list(fds)


def write_value(fd: int, value: Any) -> None:
    data = codec.encode(value)
    view = memoryview(LENGTH.pack(len(data)) + data)
    while view:
        view = view[os.write(fd, view):]


def _read_exact(fd: int, size: int) -> bytes:
    chunks = []
    while size:
        chunk = os.read(fd, min(size, 1 << 20))
        if not chunk:
            raise EOFError("pipe closed")
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def read_value(fd: int, max_bytes: int) -> Any:
    """The next value on a pipe: ``EOFError`` at its end, :class:`.codec.CodecError` for a bad frame."""
    (length,) = LENGTH.unpack(_read_exact(fd, LENGTH.size))
    if length > max_bytes:
        raise codec.CodecError(f"a frame of {length} bytes (the limit is {max_bytes})")
    return codec.decode(_read_exact(fd, length))

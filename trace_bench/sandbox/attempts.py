"""The strong mode's record of writes outside a call's writable directories, kept by its supervisor.

In the strong mode a write outside ``/tmp`` (and ``/dev/shm`` in calls that may start processes)
fails in the kernel (read-only binds, absent paths), so a candidate that catches the ``OSError``
would leave no trace.  Before anything of the target runs, the child installs an audit hook that
writes one line per attempt (opening a path for writing, ``os.open`` with write flags, creating,
renaming, removing, changing a path) to a socket whose other end only the supervisor holds; the
line leaves the process before the kernel sees the call, so the candidate sees its error only after
the attempt is on record, and a socket's sent bytes cannot be read back from its sending end (unlike
a pipe, which ``/proc/self/fd`` reopens for reading).  The child's own code closes the record with
:data:`END` just before it reports; a record that ends without it while the child still runs was
closed (or shut) by the code, itself counted as a denial.

Limits, stated in docs/task-suites.md's threat model: native code (ctypes, an extension, an exec'd
program) writes without an audit event; code in the process may disarm the hook for *later*
attempts or forge lines (more denials, or :data:`END` before closing), never erase what was sent.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from trace_bench.sandbox import guard, policy

END = b"\x00end\n"  # a path never holds a NUL byte, so no recorded line can read as the end
MAX_PATHS = 10  # paths a report names; every attempt is counted
_MAX_LINE = 300
_DEVICES = frozenset({"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"})
_OPEN_DESCRIPTORS = ("/dev/fd/", "/dev/stdout", "/dev/stderr", "/proc/self/fd/")

_channel = [-1]


def install(channel: int, read_only: list[str], shm: bool) -> None:
    """Child side, strong mode: record every write outside the call's writable directories on ``channel``
    from now on.  ``read_only`` are paths bound read-only under ``/tmp``; ``shm``: ``/dev/shm`` is the call's."""
    _channel[0] = channel
    sys.dont_write_bytecode = True  # the interpreter's own .pyc writes into read-only folders are no attempt
    roots = tuple(root + os.sep for root in ((policy.CALL_TMP, policy.CALL_SHM) if shm else (policy.CALL_TMP,)))
    covered = tuple(os.path.realpath(path) for path in read_only)

    def writable(path: str | None) -> bool:
        return call_writable(path, roots, covered)

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event != "open" and event not in guard.PATH_EVENTS:
            return
        for target, dir_fd in guard.written(event, args):
            text = os.fsdecode(target) if isinstance(target, (str, bytes, os.PathLike)) else ""
            if text.startswith(_OPEN_DESCRIPTORS):
                continue
            resolved = guard.resolve(target, dir_fd)
            if not writable(resolved):
                line = str(resolved or text).replace("\n", "\\n").replace("\x00", "")[:_MAX_LINE] + "\n"
                _send(line.encode("utf-8", "replace"))

    sys.addaudithook(hook)


def call_writable(path: str | None, roots: tuple[str, ...], covered: tuple[str, ...]) -> bool:
    """Whether a call may write ``path`` (resolved; None: not a path): under one of ``roots`` (each ending
    in a separator), or a device every call may write, and not under a read-only bind of ``covered``."""
    if path is None or path in _DEVICES:
        return True
    inside = path.startswith(roots) or path + os.sep in roots
    return inside and not any(path == ro or path.startswith(ro + os.sep) for ro in covered)


def _send(data: bytes) -> None:
    try:
        view = memoryview(data)
        while view:
            view = view[os.write(_channel[0], view):]
    except OSError:  # closed by the code: the supervisor sees the record end early
        pass


def channel() -> int:
    """Child side: the descriptor of the record (-1 where there is none): the one socket a call holds."""
    return _channel[0]


def end() -> None:
    """Child side: the call's own code is done; nothing after this is the candidate's."""
    if _channel[0] >= 0:
        _send(END)


class Ledger:
    """Supervisor side: counts the lines the child's hook sent, and whether the record was closed early."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.count = 0
        self.paths: list[str] = []
        self.ended = False
        self.closed = False
        self._partial = b""

    def feed(self, data: bytes) -> None:
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()[-_MAX_LINE:]
        for line in lines:
            if line + b"\n" == END:
                self.ended = True
            elif line:
                self.count += 1
                if len(self.paths) < MAX_PATHS:
                    self.paths.append(line[:_MAX_LINE].decode("utf-8", "replace"))

    def finished(self, child_running: bool) -> None:
        """The record reached its end: closed by the code when the child still runs and never ended it."""
        if child_running and not self.ended:
            self.closed = True

    def report(self) -> dict[str, Any]:
        return {"count": self.count, "paths": list(self.paths), "closed": self.closed}

"""The strong mode's record of writes outside a call's writable directories, kept by its supervisor.

In the strong mode a write outside ``/tmp`` (and ``/dev/shm`` in calls that may start processes)
fails in the kernel (read-only binds, absent paths), so a candidate that catches the ``OSError``
would leave no trace.  Before anything of the target runs, the child installs an audit hook that
writes one line per attempt (opening a path for writing, ``os.open`` with write flags, creating,
renaming, removing, changing a path) to a socket whose other end only the supervisor holds; the
line leaves the process before the kernel sees the call, so the candidate sees its error only after
the attempt is on record, and a socket's sent bytes cannot be read back from its sending end (unlike
a pipe, which ``/proc/self/fd`` reopens for reading).

The record is framed so that its end is certain, not a race with the child's exit: :func:`install`
opens it with a line naming a fresh nonce, and the child's own code closes it with an end line
naming the same nonce, *before* it writes the call's result (:func:`install` returns that step).
The supervisor reads whatever the socket holds after the child exited, so a call whose result
reached the job without its record's end (the code closed, shut or replaced the descriptor, so the
end went nowhere or elsewhere) or with a line the hook cannot write (a NUL, a second end) was
tampered with: :attr:`Ledger.broken`, told as a ``file`` denial ("closed") by the verdict, on every
such call whatever the timing.

Limits, stated in docs/task-suites.md's threat model: native code (ctypes, an extension, an exec'd
program) writes without an audit event; code in the process shares the interpreter with the hook
and its closing step, so code that reaches into the harness's own objects (its frames, closures or
modules) may disarm the hook for *later* attempts, or find the nonce and end the record itself
before closing it; it never erases what was sent.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from typing import Any

from trace_bench.sandbox import guard, policy

BEGIN = b"\x00begin "  # control lines start with a NUL, which no path (so no recorded line) holds
END = b"\x00end "
MAX_PATHS = 10  # paths a report names; every attempt is counted
_MAX_LINE = 300
_DEVICES = frozenset({"/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty"})
_OPEN_DESCRIPTORS = ("/dev/fd/", "/dev/stdout", "/dev/stderr", "/proc/self/fd/")

_channel = [-1]


def install(channel: int, read_only: list[str], shm: bool) -> Callable[[], None]:
    """Child side, strong mode: record every write outside the call's writable directories on ``channel``
    from now on.  ``read_only`` are paths bound read-only under ``/tmp``; ``shm``: ``/dev/shm`` is the call's.

    Returns the record's closing step, for the child's own code to call once the target returned and
    before it writes the result (the nonce lives only in that closure and in the line already sent)."""
    _channel[0] = channel
    nonce = os.urandom(12).hex().encode()
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
    _send(BEGIN + nonce + b"\n")  # last: a record that was opened is one whose closing step exists

    def finish() -> None:
        # on a descriptor the code closed this fails (or lands in whatever reuses its number): the
        # supervisor's record then has no end, which is how it knows
        with contextlib.suppress(OSError):
            _write_all(channel, b"\n" + END + nonce + b"\n")  # the newline ends a line the code left open

    return finish


def call_writable(path: str | None, roots: tuple[str, ...], covered: tuple[str, ...]) -> bool:
    """Whether a call may write ``path`` (resolved; None: not a path): under one of ``roots`` (each ending
    in a separator), or a device every call may write, and not under a read-only bind of ``covered``."""
    if path is None or path in _DEVICES:
        return True
    inside = path.startswith(roots) or path + os.sep in roots
    return inside and not any(path == ro or path.startswith(ro + os.sep) for ro in covered)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def _send(data: bytes) -> None:
    with contextlib.suppress(OSError):  # closed by the code: the record then lacks its end
        _write_all(_channel[0], data)


def channel() -> int:
    """Child side: the descriptor of the record (-1 where there is none): the one socket a call holds."""
    return _channel[0]


class Ledger:
    """Supervisor side: counts the lines the child's hook sent, and whether the record was opened and
    properly ended (fed everything the socket holds, the rest read after the child exited)."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.count = 0
        self.paths: list[str] = []
        self.nonce: bytes | None = None
        self.ended = False
        self.forged = False
        self._partial = b""

    def feed(self, data: bytes) -> None:
        lines = (self._partial + data).split(b"\n")
        self._partial = lines.pop()[-_MAX_LINE:]
        for line in lines:
            if line.startswith(b"\x00"):
                self._control(line)
            elif line:
                self.count += 1
                if len(self.paths) < MAX_PATHS:
                    self.paths.append(line[:_MAX_LINE].decode("utf-8", "replace"))

    def _control(self, line: bytes) -> None:
        if self.nonce is None and line.startswith(BEGIN) and not self.count:
            self.nonce = line[len(BEGIN):]
        elif self.nonce and line == END + self.nonce and not self.ended:
            self.ended = True
        else:  # a second beginning, a wrong or second end: written by code other than the hook
            self.forged = True

    @property
    def broken(self) -> bool:
        """The record was opened (the hook was installed) and lacks its one proper end, or holds a line the
        hook never writes.  Meaningful for a call that delivered a result: the child ends the record first."""
        return self.nonce is not None and (not self.ended or self.forged)

    def report(self) -> dict[str, Any]:
        return {"count": self.count, "paths": list(self.paths), "broken": self.broken}

"""The weak mode's audit hook: refuses what a sandboxed call should not do, as a diagnostic.

Used only where bubblewrap cannot run and the user allowed the weak mode (:mod:`.mode`).  A
``sys.addaudithook`` policy refuses process creation, network use, writes outside the call's
directory, signals, ctypes and rlimit changes, and records each refusal so that feedback can
name it.  It stops mistakes and naive attempts; it is *not* a boundary: code in the same process
can switch it off (e.g. by rebinding this module's globals), which is why the strong mode does
without it and relies on namespaces, read-only binds, rlimits and seccomp instead.  Its table of
the events that write a path (:func:`written`) also serves the strong mode's record of writes
(:mod:`.attempts`), which refuses nothing.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

from trace_bench._util.errors import TraceBenchError

_PROCESS_EVENTS = frozenset({
    "os.fork", "os.forkpty", "os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.startfile",
    "subprocess.Popen", "pty.spawn", "_posixsubprocess.fork_exec",
})
_NETWORK_EVENTS = frozenset({
    "socket.connect", "socket.bind", "socket.sendto", "socket.sendmsg", "socket.getaddrinfo",
    "socket.gethostbyname", "socket.gethostbyname_ex", "socket.gethostbyaddr", "socket.getnameinfo",
    "urllib.Request", "http.client.connect", "ftplib.connect", "smtplib.connect", "poplib.connect",
    "imaplib.open", "nntplib.connect", "telnetlib.Telnet.open", "webbrowser.open",
})
_ALWAYS_DENIED = frozenset({
    "os.kill", "os.killpg", "signal.pthread_kill", "resource.setrlimit", "resource.prlimit",
    "ctypes.dlopen", "ctypes.dlsym", "ctypes.dlsym/handle", "ctypes.call_function", "ctypes.string_at",
    "ctypes.wstring_at",
    "gc.get_referrers", "gc.get_referents", "gc.get_objects", "os.setns", "os.unshare",
    "os.link", "os.symlink", "os.mknod", "os.mkfifo", "os.chroot", "sys._current_frames",
})
# event -> (index of a written path, index of its dir_fd argument or None)
PATH_EVENTS: dict[str, tuple[tuple[int, int | None], ...]] = {
    "os.remove": ((0, 1),), "os.rmdir": ((0, 1),), "os.mkdir": ((0, 2),), "os.rename": ((0, 2), (1, 3)),
    "os.chmod": ((0, 2),), "os.chown": ((0, 3),), "os.utime": ((0, 3),), "os.truncate": ((0, None),),
    "os.setxattr": ((0, None),), "os.removexattr": ((0, None),), "os.chflags": ((0, None),),
    "os.lchflags": ((0, None),), "os.lchmod": ((0, None),), "os.lchown": ((0, None),),
    "shutil.rmtree": ((0, 1),), "shutil.copyfile": ((1, None),), "shutil.copymode": ((1, None),),
    "shutil.copystat": ((1, None),), "shutil.copytree": ((1, None),), "shutil.move": ((0, None), (1, None)),
    "shutil.chown": ((0, None),), "sqlite3.connect": ((0, None),),
}
WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


class SandboxDenied(TraceBenchError, PermissionError):
    """Raised by the sandbox's audit hook; an uncaught one gives the result status ``denied``."""


def resolve(path: Any, dir_fd: Any = None) -> str | None:
    """Absolute real path of an audited path argument; None when it cannot be resolved."""
    if isinstance(path, int):
        return None
    try:
        text = os.fsdecode(os.fspath(path))
    except TypeError:
        return None
    if not os.path.isabs(text) and isinstance(dir_fd, int):
        try:
            text = os.path.join(os.readlink(f"/proc/self/fd/{dir_fd}"), text)
        except OSError:
            return None
    return os.path.realpath(text)


def written(event: str, args: tuple[Any, ...]) -> list[tuple[Any, Any]]:
    """The (path, dir_fd) pairs an audit event writes to or changes; an open descriptor (an int path) is
    none (it was opened, and judged, before)."""
    if event == "open":
        flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
        mode = args[1] if len(args) > 1 and isinstance(args[1], str) else ""
        writing = bool(flags & WRITE_FLAGS) or any(c in mode for c in "wax+")
        return [(args[0], None)] if writing and args and not isinstance(args[0], int) else []
    found = []
    for index, fd_index in PATH_EVENTS.get(event, ()):
        if index >= len(args) or isinstance(args[index], int):
            continue
        if event == "sqlite3.connect" and args[index] in (":memory:", b":memory:", ""):
            continue
        found.append((args[index], args[fd_index] if fd_index is not None and fd_index < len(args) else None))
    return found


def install_policy(workdir: str, *, network: bool, max_processes: int,
                   record: Callable[[str], None]) -> None:
    """Install the audit hook: deny what the sandbox forbids, allow the rest.

    ``record`` is told about every refusal (so a result can list refusals the code caught).
    Process creators that raise no audit event in some Python versions
    (``_posixsubprocess.fork_exec``) are replaced by a refusing function first.
    """
    root = os.path.realpath(workdir)
    allowed_prefix = root + os.sep
    spawned = [0]

    def inside(path: str | None) -> bool:
        return path is not None and (path == root or path.startswith(allowed_prefix) or path == os.devnull)

    def deny(what: str) -> None:
        record(what)
        raise SandboxDenied(f"sandbox: {what} is not allowed")

    def hook(event: str, args: tuple[Any, ...]) -> None:
        if event == "open":
            flags = args[2] if len(args) > 2 and isinstance(args[2], int) else 0
            mode = args[1] if len(args) > 1 and isinstance(args[1], str) else ""
            writing = bool(flags & WRITE_FLAGS) or any(c in mode for c in "wax+")
            if writing and not isinstance(args[0], int) and not inside(resolve(args[0])):
                deny(f"writing {args[0]!s} (outside the sandbox directory)")
            return
        if event in PATH_EVENTS:
            for index, fd_index in PATH_EVENTS[event]:
                if index >= len(args) or isinstance(args[index], int):  # an open fd was allowed already
                    continue
                target = args[index]
                if event == "sqlite3.connect" and target in (":memory:", b":memory:", ""):
                    continue
                dir_fd = args[fd_index] if fd_index is not None and fd_index < len(args) else None
                if not inside(resolve(target, dir_fd)):
                    deny(f"{event} on {target!s} (outside the sandbox directory)")
            return
        if event in _PROCESS_EVENTS:
            spawned[0] += 1
            if spawned[0] > max_processes:
                deny(f"creating a process ({event})")
            return
        if event in _ALWAYS_DENIED:
            deny(event)
        if not network:
            if event in _NETWORK_EVENTS:
                deny(f"network access ({event})")
            if event == "socket.__new__" and len(args) > 1 and args[1] != 1:  # 1 == AF_UNIX
                deny("opening a network socket")

    def refuse_fork_exec(*_args: Any, **_kwargs: Any) -> Any:
        if max_processes == 0:  # with a budget, the audited caller (subprocess.Popen, ...) was counted
            deny("creating a process (_posixsubprocess.fork_exec)")
        return original_fork_exec(*_args, **_kwargs)

    try:
        import _posixsubprocess

        original_fork_exec = _posixsubprocess.fork_exec
        _posixsubprocess.fork_exec = refuse_fork_exec
        subprocess_module = sys.modules.get("subprocess")
        if subprocess_module is not None and hasattr(subprocess_module, "_fork_exec"):
            subprocess_module._fork_exec = refuse_fork_exec  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - not POSIX
        pass
    sys.addaudithook(hook)

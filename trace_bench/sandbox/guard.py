"""In-child protections: resource limits, a private network namespace and an audit-hook policy.

Layers, strongest first: the separate process with its own process group (the parent kills
the whole group on timeout), rlimits (address space, CPU seconds, file size, process count),
a network namespace with no interfaces up (Linux, needs CAP_SYS_ADMIN or user namespaces), and
a ``sys.addaudithook`` policy that refuses process creation, network use, writes outside the
sandbox directory, signals, ctypes and rlimit changes.  The audit hook stops mistakes and naive
attempts by LLM-written code; it is *not* a boundary against a determined attacker running
Python in the same process (nothing in-process is), which is why the OS-level layers exist.
We run as root here, where RLIMIT_NPROC is not enforced: the hook is what denies fork bombs.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from typing import Any

CLONE_NEWUSER = 0x10000000
CLONE_NEWNET = 0x40000000

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
_PATH_EVENTS: dict[str, tuple[tuple[int, int | None], ...]] = {
    "os.remove": ((0, 1),), "os.rmdir": ((0, 1),), "os.mkdir": ((0, 2),), "os.rename": ((0, 2), (1, 3)),
    "os.chmod": ((0, 2),), "os.chown": ((0, 3),), "os.utime": ((0, 3),), "os.truncate": ((0, None),),
    "os.setxattr": ((0, None),), "os.removexattr": ((0, None),), "os.chflags": ((0, None),),
    "os.lchflags": ((0, None),), "os.lchmod": ((0, None),), "os.lchown": ((0, None),),
    "shutil.rmtree": ((0, 1),), "shutil.copyfile": ((1, None),), "shutil.copymode": ((1, None),),
    "shutil.copystat": ((1, None),), "shutil.copytree": ((1, None),), "shutil.move": ((0, None), (1, None)),
    "shutil.chown": ((0, None),), "sqlite3.connect": ((0, None),),
}
_WRITE_FLAGS = os.O_WRONLY | os.O_RDWR | os.O_APPEND | os.O_CREAT | os.O_TRUNC


class SandboxDenied(PermissionError):
    """Raised by the sandbox's audit hook; an uncaught one gives the result status ``denied``."""


def _libc_unshare(flags: int) -> bool:
    if hasattr(os, "unshare"):  # Python >= 3.12
        try:
            os.unshare(flags)
            return True
        except OSError:
            return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return libc.unshare(flags) == 0
    except (OSError, AttributeError):
        return False


def isolate_network() -> bool:
    """Move this process into a fresh network namespace (only a down loopback); True on success."""
    if not sys.platform.startswith("linux"):
        return False
    return _libc_unshare(CLONE_NEWNET) or _libc_unshare(CLONE_NEWUSER | CLONE_NEWNET)


def _virtual_memory_bytes() -> int:
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def apply_rlimits(memory_mb: int, cpu_s: float, file_size_mb: int, max_processes: int) -> list[str]:
    """Set the child's rlimits (never above an inherited hard limit); returns the ones set."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not POSIX
        return []
    applied: list[str] = []

    def set_limit(name: str, soft: int, hard: int) -> None:
        kind = getattr(resource, name, None)
        if kind is None:
            return
        _, current_hard = resource.getrlimit(kind)
        if current_hard != resource.RLIM_INFINITY:
            soft, hard = min(soft, current_hard), min(hard, current_hard)
        try:
            resource.setrlimit(kind, (soft, hard))
            applied.append(name)
        except (ValueError, OSError):
            pass

    limit = _virtual_memory_bytes() + int(memory_mb) * 1024 * 1024
    set_limit("RLIMIT_AS", limit, limit)
    cpu = max(1, int(-(-cpu_s // 1)))
    set_limit("RLIMIT_CPU", cpu, cpu + 1)
    fsize = int(file_size_mb) * 1024 * 1024
    set_limit("RLIMIT_FSIZE", fsize, fsize)
    set_limit("RLIMIT_CORE", 0, 0)
    if max_processes == 0:
        set_limit("RLIMIT_NPROC", 0, 0)
    return applied


def _resolve(path: Any, dir_fd: Any = None) -> str | None:
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
            writing = bool(flags & _WRITE_FLAGS) or any(c in mode for c in "wax+")
            if writing and not isinstance(args[0], int) and not inside(_resolve(args[0])):
                deny(f"writing {args[0]!s} (outside the sandbox directory)")
            return
        if event in _PATH_EVENTS:
            for index, fd_index in _PATH_EVENTS[event]:
                if index >= len(args) or isinstance(args[index], int):  # an open fd was allowed already
                    continue
                target = args[index]
                if event == "sqlite3.connect" and target in (":memory:", b":memory:", ""):
                    continue
                dir_fd = args[fd_index] if fd_index is not None and fd_index < len(args) else None
                if not inside(_resolve(target, dir_fd)):
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
        _posixsubprocess.fork_exec = refuse_fork_exec  # type: ignore[attr-defined]
        subprocess_module = sys.modules.get("subprocess")
        if subprocess_module is not None and hasattr(subprocess_module, "_fork_exec"):
            subprocess_module._fork_exec = refuse_fork_exec  # type: ignore[attr-defined]
    except ImportError:  # pragma: no cover - not POSIX
        pass
    sys.addaudithook(hook)

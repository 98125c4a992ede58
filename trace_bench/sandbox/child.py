"""The child of a call: lock itself down, run the target, write one result, exit.

Only the call's first process (this one) writes the result: a process the target forks and that
returns from it exits without a word, so a candidate's fork can neither break the result (two
messages) nor choose it.

The target (``package.module:function``) is our evaluator code; it usually ``exec``s the
candidate, so everything in this process, the result included, is untrusted.  The result is one
:mod:`.codec` message written to the result pipe, ``{"ok": true, "value": ...}`` or ``{"ok":
false, "status", "error_type", "message", "traceback"}``; the job validates it and never lets it
choose a score by itself (see :mod:`trace_bench.sandbox` on trusted scoring).

Order matters: what needs privileges (mounting the call's ``/proc``) happens first, then the
target is imported, then rlimits, capability drop, ``no_new_privs`` and the seccomp filter
close the door (in the strong mode, an audit hook then tells the supervisor of every write outside
``/tmp``: :mod:`.attempts`), and only then does the target run.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import importlib
import io
import os
import resource
import socket
import sys
import tempfile
import traceback
from collections.abc import Callable
from typing import Any, NoReturn

from trace_bench._util.processes import die_with_parent
from trace_bench.sandbox import codec, linux, policy
from trace_bench.sandbox.frames import recv_frame
from trace_bench.sandbox.limits import STDOUT_TAIL_CHARS, tail

MAX_CHANNELS = 4

_MAX_MESSAGE = 2000
_MAX_TRACEBACK = 8000
_DENIED_ERRNOS = {errno.EPERM, errno.EACCES, errno.EROFS}
# The standard library's process machinery: its semaphores, queues and shared memory live in /dev/shm,
# which is writable only in calls with a process budget.  A read-only error raised in there is the
# evaluator's machinery failing, not the candidate reaching for a path: not a denial.
_SHARED_MEMORY_USERS = tuple(os.path.join(os.path.dirname(os.__file__), package) + os.sep
                             for package in ("multiprocessing", "concurrent"))
_SHARED_MEMORY_HINT = (" (POSIX semaphores, queues and shared memory need /dev/shm, writable only in calls "
                       "that may start processes: the task's max_processes)")


def ping(payload: Any) -> Any:
    """A target that returns its payload: health checks and overhead measurements."""
    return payload


def resolve_target(target: str) -> Callable[[Any], Any]:
    module_name, sep, func_name = target.partition(":")
    if not sep or not module_name or not func_name:
        raise ValueError(f"sandbox target must look like 'package.module:function', got {target!r}")
    func: Callable[[Any], Any] = getattr(importlib.import_module(module_name), func_name)
    if not callable(func):
        raise TypeError(f"sandbox target {target!r} is not callable")
    return func


class TailWriter(io.TextIOBase):
    """``sys.stdout``/``sys.stderr`` of a call: keeps the last few KB, and passes everything on to fd 1."""

    def __init__(self) -> None:
        self._tail = ""

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        self._tail = (self._tail + text)[-2 * STDOUT_TAIL_CHARS:]
        with contextlib.suppress(OSError):
            data = text.encode("utf-8", "replace")
            while data:
                data = data[os.write(1, data):]
        return len(text)

    def isatty(self) -> bool:
        return False

    def getvalue(self) -> str:
        return tail(self._tail)


def _redirect_output(output_fd: int) -> TailWriter:
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(output_fd, 1)
    os.dup2(output_fd, 2)
    os.close(null)
    os.close(output_fd)
    writer = TailWriter()
    sys.stdout = sys.stderr = writer
    sys.stdin = io.StringIO()
    return writer


def _address_space() -> int:
    """Bytes of virtual memory this process maps now (0 when /proc cannot tell)."""
    try:
        with open("/proc/self/statm", "rb") as fh:
            return int(fh.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


def _apply_rlimits(limits: dict[str, Any], strong: bool, mapped: int) -> None:
    def set_limit(kind: int, value: int) -> None:
        _, hard = resource.getrlimit(kind)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        with contextlib.suppress(ValueError, OSError):
            resource.setrlimit(kind, (value, value))

    set_limit(resource.RLIMIT_AS, max(mapped, _address_space()) + (int(limits["memory_mb"]) << 20))
    cpu = max(1, -(-int(float(limits["cpu_s"]) * 1000) // 1000))
    _, hard = resource.getrlimit(resource.RLIMIT_CPU)
    if hard == resource.RLIM_INFINITY:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))  # SIGXCPU, then SIGKILL a second later
    set_limit(resource.RLIMIT_FSIZE, int(limits["file_size_mb"]) << 20)
    set_limit(resource.RLIMIT_CORE, 0)
    set_limit(resource.RLIMIT_NOFILE, policy.OPEN_FILES)
    if strong:  # counted per user namespace (this call's); the host's uid 0 is exempt (see launcher)
        set_limit(resource.RLIMIT_NPROC, policy.CALL_TASKS + int(limits["max_processes"]))


@functools.cache
def seccomp_filter(network: bool, allow_processes: bool, notify: bool = False) -> bytes | None:
    """The call's seccomp program (built once, in the zygote, for each kind of call); with ``notify``
    its refusals go to the supervisor, which records them (:mod:`.refusals`)."""
    from trace_bench.sandbox.seccomp import build_filter

    return build_filter(policy.refused_syscalls(network=network, max_processes=int(allow_processes)),
                        allow_processes=allow_processes, arg0_allowed=policy.ARG0_ALLOWED, notify=notify)


def _lock_down(limits: dict[str, Any], workdir: str, strong: bool, denied: list[str], mapped: int,
               refusals: socket.socket | None,
               attempts: tuple[int, list[str]] | None = None) -> Callable[[], None] | None:
    """Apply the call's limits; returns the closing step of the strong mode's record of writes, if any."""
    _apply_rlimits(limits, strong, mapped)
    if not linux.is_linux():
        return None
    if strong:
        linux.drop_capabilities()
    linux.no_new_privs()
    from trace_bench.sandbox.seccomp import syscall_number

    network, processes = bool(limits["network"]), int(limits["max_processes"]) > 0
    number = syscall_number("seccomp") if refusals is not None else None
    program = seccomp_filter(network, processes, number is not None)
    if program is not None:
        try:
            listener = linux.install_filter(program, listener_syscall=number)
        except OSError:
            if number is None:
                raise
            # a kernel without seccomp's user notification (before 5.0): the kernel refuses, unrecorded
            listener = linux.install_filter(seccomp_filter(network, processes, False) or b"")
        if refusals is not None and listener is not None:  # the supervisor answers (and counts) every refusal
            from trace_bench.sandbox.refusals import send_listener

            send_listener(refusals, listener)
    if refusals is not None:
        refusals.close()
    if strong and attempts is not None:  # the supervisor's record of writes outside /tmp (:mod:`.attempts`)
        from trace_bench.sandbox.attempts import install

        return install(attempts[0], attempts[1], shm=processes)
    if not strong:  # the audit hook is a diagnostic for the weak mode, never the boundary
        from trace_bench.sandbox.guard import install_policy

        install_policy(workdir, network=bool(limits["network"]), max_processes=int(limits["max_processes"]),
                       record=lambda what: denied.append(what) if len(denied) < 20 else None)
    return None


def _own_proc() -> None:
    """A ``/proc`` showing only this call's processes; where the kernel refuses a new one (a sandbox
    started by root bubblewrap covers parts of its ``/proc``, which blocks nested mounts), none at all."""
    flags = linux.MS_NOSUID | linux.MS_NODEV | linux.MS_NOEXEC
    try:
        linux.mount("proc", "/proc", "proc", flags)
    except PermissionError:
        linux.mount("tmpfs", "/proc", "tmpfs", flags | linux.MS_RDONLY, "size=4k,mode=0555")


_NETWORK_NAMES = frozenset({"socket", "socketpair", "create_connection", "connect", "bind", "getaddrinfo",
                            "urlopen", "HTTPConnection", "create_server"})
_PROCESS_NAMES = frozenset({"fork", "forkpty", "vfork", "system", "popen", "Popen", "run", "call", "check_output",
                            "posix_spawn", "posix_spawnp", "fork_exec", "execv", "execve", "execvp", "spawnv"})


def _refused_call(tb: Any) -> str:
    """``network``, ``process`` or ``syscall``: what the innermost frame was calling when refused (read
    from the names its code uses, since a refused C call leaves no frame of its own)."""
    if tb is None:
        return "syscall"
    while tb.tb_next is not None:
        tb = tb.tb_next
    code = tb.tb_frame.f_code
    names = {*code.co_names, code.co_name}
    if names & _NETWORK_NAMES or "socket" in code.co_filename:
        return "network"
    if names & _PROCESS_NAMES or "subprocess" in code.co_filename:
        return "process"
    return "syscall"


def _machinery_read_only(exc: BaseException) -> bool:
    """Whether ``exc`` is a read-only-filesystem error raised inside the standard library's process
    machinery (``multiprocessing``, ``concurrent.futures``): /dev/shm refused a semaphore or a segment."""
    if not isinstance(exc, OSError) or exc.errno != errno.EROFS or exc.__traceback__ is None:
        return False
    tb = exc.__traceback__
    while tb.tb_next is not None:
        tb = tb.tb_next
    return tb.tb_frame.f_code.co_filename.startswith(_SHARED_MEMORY_USERS)


def _denial(exc: BaseException) -> str | None:
    """What the sandbox refused, if ``exc`` (or an exception it came from) is a refusal: ``file``,
    ``network``, ``process`` or ``syscall`` (see :class:`.limits.SandboxResult`); else None."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        if _machinery_read_only(current):
            pass
        elif type(current).__name__ == "SandboxDenied":
            text = str(current)
            return ("network" if "network" in text or "socket" in text else "process" if "process" in text
                    else "file" if "writing" in text or "outside" in text else "syscall")
        elif isinstance(current, OSError) and current.errno in _DENIED_ERRNOS:
            if current.filename is not None or current.errno == errno.EROFS:
                return "file"
            return _refused_call(current.__traceback__)
        seen.add(id(current))
        current = current.__cause__ or current.__context__
    return None


def _failure(status: str, exc: BaseException, with_traceback: bool = True) -> dict[str, Any]:
    hint = _SHARED_MEMORY_HINT if _machinery_read_only(exc) else ""
    return {"ok": False, "status": status, "error_type": type(exc).__name__,
            "message": ((str(exc) or type(exc).__name__)[:_MAX_MESSAGE - len(hint)] + hint),
            "traceback": tail(traceback.format_exc(), _MAX_TRACEBACK) if with_traceback else ""}


def await_request(to_child: socket.socket, output_fd: int, workdir: str, *, strong: bool,
                  refusals: socket.socket | None = None, attempts: int | None = None,
                  read_only: list[str] | None = None) -> NoReturn:
    """Body of the call's child: set up what needs no request, wait for it, then run it; never returns."""
    try:
        die_with_parent()
        if strong:
            _own_proc()
        else:
            os.setsid()
        os.chdir(workdir)
        tempfile.tempdir = workdir
        os.environ["TMPDIR"] = workdir
        writer = _redirect_output(output_fd)
        body, fds = recv_frame(to_child, max_fds=1 + MAX_CHANNELS)
        to_child.close()
        request = codec.decode(body)
        if strong:  # the request says how large the call's /tmp may grow, and whether it needs /dev/shm
            size = max(1, int(request["limits"]["file_size_mb"])) << 20
            linux.mount("tmpfs", policy.CALL_TMP, None, linux.MS_REMOUNT | linux.MS_NOSUID | linux.MS_NODEV,
                        policy.call_tmp_options(size))
            if int(request["limits"]["max_processes"]) > 0:
                linux.mount("tmpfs", policy.CALL_SHM, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV,
                            policy.call_tmp_options(size))
    except BaseException as exc:  # noqa: B036 - nowhere to send a result yet: the output tail says why
        with contextlib.suppress(BaseException):
            print(f"sandbox call set-up failed: {type(exc).__name__}: {exc}", flush=True)
        os._exit(72)
    run_child(request, fds[0], fds[1:], workdir, writer, strong=strong, refusals=refusals,
              attempts=None if attempts is None else (attempts, list(read_only or [])))


def run_child(request: dict[str, Any], result_fd: int, channels: list[int], workdir: str, writer: TailWriter, *,
              strong: bool, refusals: socket.socket | None = None,
              attempts: tuple[int, list[str]] | None = None) -> NoReturn:
    """Run one request in this (already isolated) process and write its result; never returns."""
    denied: list[str] = []
    mapped = _address_space()  # the warm interpreter's own mappings come on top of the memory limit
    reporter = os.getpid()  # only this process reports: a forked child that returns from the target does not
    end_record: Callable[[], None] | None = None
    try:
        if request.get("sys_path"):
            sys.path[:] = [p for p in request["sys_path"] if isinstance(p, str)]
        func = resolve_target(str(request["target"]))
        limits = request["limits"]
        end_record = _lock_down(limits, workdir, strong, denied, mapped, refusals, attempts)
        payload = request["payload"]
        if channels:
            payload = {**payload, "channels": list(channels)}
        message: dict[str, Any] = {"ok": True, "value": func(payload)}
    except MemoryError as exc:
        message = _failure("oom", exc, with_traceback=False)
    except BaseException as exc:  # noqa: B036 - the candidate may raise anything, SystemExit included
        denial = _denial(exc)
        message = _failure("denied" if denial else "error", exc)
        if denial:
            message["denial"] = denial
    if os.getpid() != reporter:  # a process the target forked, come back here: the call's first process reports
        os._exit(0)
    if end_record is not None:  # before the result: a result whose record lacks its end was tampered with
        end_record()
    message["denied_actions"] = denied[:20]
    message["stdout"] = writer.getvalue()
    try:
        data = codec.encode(message)
    except (codec.CodecError, MemoryError) as exc:
        data = codec.encode({"ok": False, "status": "error", "error_type": "CodecError", "denied_actions": denied[:20],
                             "message": f"the evaluator's return value is not plain data: {exc}"[:_MAX_MESSAGE]})
    with contextlib.suppress(BaseException):
        sys.stdout.flush()
    with contextlib.suppress(OSError):
        view = memoryview(data)
        while view:
            view = view[os.write(result_fd, view):]
    os._exit(0)


__all__ = ["STDOUT_TAIL_CHARS", "await_request", "ping", "resolve_target", "run_child"]

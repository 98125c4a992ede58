"""One call's supervisor: sets up the call's namespaces, runs the child, reports how it ended.

Forked by the zygote ahead of the call's request (see :mod:`.zygote`, spares).  In the strong
mode it enters fresh user, mount, PID and IPC namespaces (:data:`.policy.CALL_NAMESPACES`),
mounts a private tmpfs on ``/tmp`` and forks the child, which becomes PID 1 of the call's PID
namespace and waits for its request; killing it (at the wall-clock limit) makes the kernel kill
every process of the call, ``setsid`` or not.  In the weak mode the child gets its own session and
a temporary directory, and a timeout kills its process group.

Then the supervisor waits for its own part of the request (the wall-clock limit, the status pipe
and the cancel pipe), keeps the tail of the child's stdout/stderr (a pipe it drains, so endless
output costs nothing but CPU) and writes one status report to the status pipe: the child's wait
status, CPU seconds, whether the wall-clock limit or the job ended it, the output tail, or why
setup failed.  It also answers every system call the call's seccomp filter refuses and counts it
(:mod:`.refusals`): the report's ``refused`` is the sandbox's own record of them; in the strong
mode, its ``attempts`` counts the writes outside the call's directories that the child's audit hook
sent it before the kernel refused each (:mod:`.attempts`).  The child cannot
reach the supervisor: it is outside the call's PID namespace and not dumpable.
"""

from __future__ import annotations

import contextlib
import gc
import os
import select
import shutil
import signal
import socket
import tempfile
import time
from typing import Any, NoReturn

from trace_bench._util.processes import die_with_parent, kill_process_group
from trace_bench.sandbox import codec, linux, policy
from trace_bench.sandbox.attempts import Ledger
from trace_bench.sandbox.frames import recv_frame
from trace_bench.sandbox.refusals import Record


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


class _Output:
    """The last :data:`.policy.OUTPUT_TAIL_BYTES` bytes of a stream, and its total size."""

    def __init__(self) -> None:
        self.tail = bytearray()
        self.total = 0

    def add(self, data: bytes) -> None:
        self.total += len(data)
        self.tail += data
        if len(self.tail) > 2 * policy.OUTPUT_TAIL_BYTES:
            del self.tail[: -policy.OUTPUT_TAIL_BYTES]

    def text(self) -> str:
        return bytes(self.tail[-policy.OUTPUT_TAIL_BYTES:]).decode("utf-8", "replace")


def _kill(pid: int, strong: bool) -> None:
    if not strong:
        kill_process_group(pid)  # the weak child leads its own session
        return
    with contextlib.suppress(OSError):
        os.kill(pid, signal.SIGKILL)  # PID 1 of the call's namespace: the kernel ends the rest


def _running(pid: int) -> bool:
    return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None


def _watch(pid: int, output_fd: int, cancel_fd: int, wall_s: float, strong: bool,
           record: Record, ledger: Ledger | None) -> tuple[int, Any, str | None, _Output]:
    """Drain the child's output until it exits; kill it at the deadline or when the job cancels; answer
    the refused system calls of ``record``'s listener as they come, and count the writes ``ledger`` hears of.

    Returns (wait status, rusage, what ended it: "timeout", "cancelled" or None, output).
    """
    deadline = time.monotonic() + wall_s
    output = _Output()
    try:
        exited_fd = os.pidfd_open(pid)
    except (AttributeError, OSError):
        exited_fd = -1  # old kernel: poll for the exit instead
    poller = select.poll()
    poller.register(output_fd, select.POLLIN)
    poller.register(cancel_fd, select.POLLIN)
    handover = record.sock.fileno() if record.sock is not None else -1
    if handover >= 0:
        poller.register(handover, select.POLLIN)
    if exited_fd >= 0:
        poller.register(exited_fd, select.POLLIN)
    if ledger is not None:
        poller.register(ledger.fd, select.POLLIN)
    ended_by: str | None = None
    while True:
        remaining = deadline - time.monotonic()
        if remaining <= 0 and ended_by is None:
            _kill(pid, strong)
            ended_by = "timeout"
        wait_ms = 20 if exited_fd < 0 or ended_by else max(1, int(remaining * 1000) + 1)
        for fd, _event in poller.poll(wait_ms):
            if fd == handover:  # the child's seccomp listener (or the end of its socket)
                poller.unregister(handover)
                handover = -1
                if record.receive() >= 0:
                    poller.register(record.listener, select.POLLIN)
            elif fd == record.listener and fd >= 0:
                if not (_event & select.POLLIN) or not record.answer():
                    poller.unregister(fd)
            elif ledger is not None and fd == ledger.fd:
                data = os.read(fd, 1 << 16)
                if data:
                    ledger.feed(data)
                else:
                    poller.unregister(fd)
            elif fd == output_fd:
                data = os.read(output_fd, 1 << 16)
                if data:
                    output.add(data)
                else:
                    poller.unregister(output_fd)
            elif fd == cancel_fd:  # the job closed its end: it wants no more from this call, or died
                poller.unregister(cancel_fd)
                if _running(pid):
                    _kill(pid, strong)
                    ended_by = ended_by or "cancelled"
        done, status, usage = os.wait4(pid, os.WNOHANG)
        if done == pid:
            break
    with contextlib.suppress(OSError):
        os.set_blocking(output_fd, False)
        while data := os.read(output_fd, 1 << 16):  # whatever is left; every writer is gone
            output.add(data)
    if ledger is not None:
        with contextlib.suppress(OSError):
            os.set_blocking(ledger.fd, False)
            while data := os.read(ledger.fd, 1 << 16):
                ledger.feed(data)
    if exited_fd >= 0:
        os.close(exited_fd)
    return status, usage, ended_by, output


def _private_tmp(size: int, visible: list[str]) -> None:
    """Mount the call's tmpfs on /tmp, then bind the sandbox's read-only paths that lived under it again."""
    handles = [(path, os.open(path, os.O_PATH), os.path.isdir(path)) for path in visible if os.path.exists(path)]
    linux.mount("tmpfs", policy.CALL_TMP, "tmpfs", linux.MS_NOSUID | linux.MS_NODEV, policy.call_tmp_options(size))
    for path, handle, directory in handles:
        os.makedirs(path if directory else os.path.dirname(path), exist_ok=True)
        if not directory:
            os.close(os.open(path, os.O_CREAT | os.O_WRONLY, 0o600))
        linux.mount(f"/proc/self/fd/{handle}", path, None, linux.MS_BIND | linux.MS_REC)
        os.close(handle)


def _enter_call_namespaces(tmp_paths: list[str]) -> None:
    linux.set_dumpable(True)  # inherited off from the zygote; writing our own id maps needs it
    uid, gid = os.getuid(), os.getgid()
    linux.unshare(policy.CALL_NAMESPACES)
    linux.map_own_ids(uid, gid)
    _private_tmp(policy.DEFAULT_TMP_BYTES, tmp_paths)


def _remove_workdir(workdir: str, strong: bool) -> None:
    """The weak mode's per-call directory (the strong mode's calls have a private /tmp)."""
    if not strong and workdir != "/tmp":
        shutil.rmtree(workdir, ignore_errors=True)


def prepare_call(to_supervisor: socket.socket, to_child: socket.socket, *, strong: bool,
                 tmp_paths: list[str]) -> NoReturn:
    """Body of the forked supervisor; never returns."""
    from trace_bench.sandbox.child import await_request

    gc.disable()  # it allocates little and lives one call: no collections, no copied pages
    setup_error, pid, output_r, workdir = "", -1, -1, "/tmp"
    record: Record | None = None
    ledger: Ledger | None = None
    try:
        die_with_parent()
        if strong:
            _enter_call_namespaces(tmp_paths)
        else:
            workdir = tempfile.mkdtemp(prefix="trace-bench-sandbox-")
        output_r, output_w = os.pipe()
        mine, childs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        record = Record(mine)
        heard, told = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM) if strong else (None, None)
        pid = os.fork()
        if pid == 0:
            os.close(output_r)
            to_supervisor.close()
            mine.close()
            if heard is not None:
                heard.close()
            await_request(to_child, output_w, workdir, strong=strong, refusals=childs,
                          attempts=told.detach() if told is not None else None, read_only=tmp_paths)
        childs.close()
        if heard is not None and told is not None:
            told.close()
            ledger = Ledger(heard.detach())
        os.close(output_w)
        if linux.is_linux():
            linux.set_dumpable(False)
    except BaseException as exc:  # noqa: B036 - reported with the call, never raised into the zygote's code
        setup_error = f"{type(exc).__name__}: {exc}"
    to_child.close()
    try:
        body, fds = recv_frame(to_supervisor, max_fds=2)
        status_fd, cancel_fd = fds
        wall_s = float(codec.decode(body)["wall_s"])
    except (EOFError, OSError, ValueError, KeyError, TypeError):  # discarded before it had a call: end quietly
        if pid > 0:
            _kill(pid, strong)
        _remove_workdir(workdir, strong)
        os._exit(0)
    report: dict[str, Any] = {"setup_error": setup_error}
    if not setup_error and record is not None:
        try:
            status, usage, ended_by, output = _watch(pid, output_r, cancel_fd, wall_s, strong, record, ledger)
            report = {"wait_status": status, "cpu_s": usage.ru_utime + usage.ru_stime,
                      "timed_out": ended_by == "timeout", "cancelled": ended_by == "cancelled",
                      "output": output.text(), "output_bytes": output.total, "refused": record.report()}
            if ledger is not None:
                report["attempts"] = ledger.report()
        except BaseException as exc:  # noqa: B036
            report = {"setup_error": f"{type(exc).__name__}: {exc}"}
    if record is not None:
        record.close()
    _remove_workdir(workdir, strong)
    with contextlib.suppress(OSError):
        _write_all(status_fd, codec.encode(report))
    os._exit(0)

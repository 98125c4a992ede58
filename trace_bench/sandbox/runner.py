"""``run_sandboxed``: run a target on a payload in a fresh sandboxed process; get plain data back.

The job process only ever reads bytes from two pipes: the call's result (written by the
untrusted child, at most :data:`.policy.RESULT_MAX_BYTES`, decoded with :mod:`.codec`) and the
status report of its supervisor (trusted: how the child ended, CPU seconds, output tail).  A call
without a process budget returns as soon as its child closed the result pipe with an ok result
(it cannot have left a process behind; the supervisor kills the child if it is still running);
every other call waits for the report, which comes after the kernel has ended every process of
the call.  If the sandbox does not finish a call within its wall limit plus
:data:`.policy.GRACE_S`, the whole sandbox is killed and restarted on the next call.

A call without a process budget is ended as soon as its child closed the result pipe with an ok
result (it cannot have left a process behind; the supervisor kills the child if it is still running),
and the job still reads the supervisor's report, which follows at once: it holds the sandbox's own
record of the call (refused system calls, CPU time), which the result must carry.
"""

from __future__ import annotations

import contextlib
import os
import select
import time
from typing import Any

from trace_bench.sandbox import codec, denials, mode, outputs, policy, server, verdict, view
from trace_bench.sandbox.frames import send_frame
from trace_bench.sandbox.limits import SandboxLimits, SandboxResult

_DEFAULT_LIMITS = SandboxLimits()


def _check_target(target: str) -> str:
    if not isinstance(target, str) or target.count(":") != 1 or not all(target.split(":")):
        raise ValueError(f"sandbox target must look like 'package.module:function', got {target!r}")
    return target.split(":")[0].split(".")[0]


def run_sandboxed(target: str, payload: Any, limits: SandboxLimits = _DEFAULT_LIMITS, *,
                  packages: tuple[str, ...] = (), paths: tuple[str, ...] = (),
                  devices: tuple[str, ...] = ()) -> SandboxResult:
    """Run ``target(payload)`` (``"package.module:function"``, our code) in a sandboxed child.

    ``payload`` must be plain data (:mod:`.codec`); ``packages`` names further top-level
    packages the target imports that live outside site-packages (the target's own package is
    always visible); ``paths`` are further host paths it may read (a toolchain), ``devices``
    device nodes it may use (a GPU's ``/dev/nvidia*``).  Never raises for anything the child
    does; raises ``ValueError`` or ``TypeError`` for a malformed target or payload (caller bugs)
    and :class:`~trace_bench.sandbox.mode.SandboxUnavailable` when no sandbox may run here.
    """
    call = start_call(target, payload, limits, packages=packages, paths=paths, devices=devices)
    return call if isinstance(call, SandboxResult) else call.finish()


class Call:
    """A launched call: the job's ends of its result, status and cancel pipes."""

    def __init__(self, handle: server.ZygoteHandle, result_r: int, status_r: int, cancel_w: int,
                 limits: SandboxLimits, started: float, target: str = "", candidate: bool = True) -> None:
        self.handle, self.result_r, self.status_r = handle, result_r, status_r
        self.cancel = _Cancel(cancel_w)
        self.limits, self.started, self.target, self.candidate = limits, started, target, candidate

    def finish(self) -> SandboxResult:
        """Wait for the call to end (or for its deadline) and read what it left."""
        try:
            result = _collect(self.handle, self.result_r, self.status_r, self.cancel,
                              self.started + self.limits.wall_s + policy.GRACE_S, self.limits)
        finally:
            self.cancel()
            server.release(self.handle)
        result.mode = self.handle.mode
        result.wall_s = time.monotonic() - self.started
        mode.record_use(self.handle.mode)
        denials.note(self.target, result)  # reward-hacking signals for the job's audit
        if self.candidate:
            outputs.note(self.target, result)  # what candidate code printed and returned, for the leakage scan
        return result


def start_call(target: str, payload: Any, limits: SandboxLimits, *, packages: tuple[str, ...] = (),
               channels: tuple[int, ...] = (), paths: tuple[str, ...] = (),
               devices: tuple[str, ...] = (), candidate: bool = True) -> Call | SandboxResult:
    """Launch a call without waiting for it (a result instead when the sandbox cannot take it).

    ``channels``: file descriptors handed to the child as ``payload["channels"]`` (e.g. the pipe
    ends that connect a checker to a candidate, :mod:`.rpc`); the caller keeps its own copies.
    ``candidate``: whether the call may run candidate code (False for a checker's call: what it
    outputs is the trusted verdict, not a candidate's output, :mod:`.outputs`).
    """
    top = _check_target(target)
    request = {"target": target, "payload": payload, "limits": limits.as_dict(), "channels": len(channels),
               "sys_path": policy.import_path()}
    try:
        body = codec.encode(request)
    except codec.CodecError as exc:
        raise TypeError(f"sandbox payload is not plain data: {exc}") from exc
    # trace_bench is shown module by module (view.py): the target's own imports, not the whole package
    needed = policy.view_names({target.partition(":")[0] if top == view.PACKAGE else top, *packages,
                                *(policy.PATH_PREFIX + os.path.abspath(p) for p in paths),
                                *(policy.DEVICE_PREFIX + d for d in devices)})
    started = time.monotonic()
    limits_frame = codec.encode({"wall_s": float(limits.wall_s)})
    failures: list[str] = []
    for attempt in range(3):  # a sandbox that died (killed after a hung call) is restarted; a dead spare replaced
        handle = mode.handle_for(needed)
        try:
            pid, to_supervisor, to_child = handle.take_spare(target, request["sys_path"])
        except server.ZygoteUnavailable as exc:
            server.release(handle)
            server.discard(handle, kill=True)
            failures.append(str(exc))
            if attempt:
                break
            continue
        result_r, result_w = os.pipe()
        status_r, status_w = os.pipe()
        cancel_r, cancel_w = os.pipe()
        try:
            send_frame(to_supervisor, limits_frame, [status_w, cancel_r])
            send_frame(to_child, body, [result_w, *channels])
        except OSError as exc:  # the spare died while it waited: its ends go, another spare takes the call
            for fd in (result_r, status_r, cancel_w):
                os.close(fd)
            failures.append(f"spare {pid}: {exc}")
            server.release(handle)
            continue
        finally:
            for fd in (result_w, status_w, cancel_r):
                os.close(fd)
            to_supervisor.close()
            to_child.close()
        return Call(handle, result_r, status_r, cancel_w, limits, started, target, candidate)
    return SandboxResult("crash", error_type="SandboxUnavailable", message="; ".join(failures)[-2000:],
                         mode=handle.mode)


class _Cancel:
    """Closes the job's end of a call's cancel pipe, once: the supervisor then ends the call."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def __call__(self) -> None:
        fd, self.fd = self.fd, -1
        if fd >= 0:
            os.close(fd)


def _collect(handle: server.ZygoteHandle, result_r: int, status_r: int, cancel: _Cancel, deadline: float,
             limits: SandboxLimits) -> SandboxResult:
    result, status = bytearray(), bytearray()
    buffers = {result_r: (result, policy.RESULT_MAX_BYTES), status_r: (status, policy.STATUS_MAX_BYTES)}
    poller = select.poll()
    for fd in buffers:
        poller.register(fd, select.POLLIN)
    pending, early_checked = set(buffers), False
    early: SandboxResult | None = None
    read = verdict.ResultBytes(result)
    try:
        while pending:
            if result_r not in pending and status_r in pending and not early_checked:
                early_checked = True
                early = verdict.early_result(read) if limits.max_processes == 0 else None
                if early is not None:  # no process can outlive the child: end it now, read the report
                    cancel()
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                server.discard(handle, kill=True)
                return SandboxResult("timeout", denial="timeout", message=f"wall-clock limit of {limits.wall_s:g}s "
                                     "exceeded (the sandbox did not end the call; it was restarted)")
            for fd, _event in poller.poll(int(remaining * 1000) + 1):
                buffer, cap = buffers[fd]
                chunk = os.read(fd, 1 << 20)
                if chunk and len(buffer) + len(chunk) <= cap:
                    buffer += chunk
                    continue
                poller.unregister(fd)
                pending.discard(fd)
                if chunk and fd == result_r:
                    read.oversize = True
                    os.close(result_r)  # the writer gets EPIPE; nothing more is read
                    del buffers[result_r]
                    cancel()  # and its supervisor ends the call now
    finally:
        for fd in buffers:
            os.close(fd)
    if early is not None:
        return verdict.with_record(early, verdict.report_of(bytes(status)), delivered=True)
    return verdict.interpret(bytes(status), read, limits)


def capabilities() -> dict[str, Any]:
    """Which isolation calls get here (starts the sandbox to find out)."""
    info: dict[str, Any] = {"setting": mode.setting(), "mode": "", "reason": ""}
    try:
        handle = mode.handle_for(frozenset())
    except mode.SandboxUnavailable as exc:
        info["reason"] = str(exc)
        return info
    server.release(handle)
    info.update(handle.info)
    info["mode"] = handle.mode
    return info


def warm_up() -> None:
    """Start the sandbox now (e.g. while a job builds its problem), not on the first evaluation."""
    with contextlib.suppress(mode.SandboxUnavailable, server.ZygoteUnavailable):
        server.release(mode.handle_for(frozenset()))

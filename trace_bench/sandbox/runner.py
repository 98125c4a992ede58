"""``run_sandboxed``: run a target on a payload in a fresh sandboxed process; get plain data back.

The job process only ever reads bytes from two pipes: the call's result (written by the
untrusted child, at most :data:`.policy.RESULT_MAX_BYTES`, decoded with :mod:`.codec`) and the
status report of its supervisor (trusted: how the child ended, CPU seconds, output tail).  A call
without a process budget returns as soon as its child closed the result pipe with an ok result
(it cannot have left a process behind; the supervisor kills the child if it is still running);
every other call waits for the report, which comes after the kernel has ended every process of
the call.  If the sandbox does not finish a call within its wall limit plus
:data:`.policy.GRACE_S`, the whole sandbox is killed and restarted on the next call.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
import sys
import time
from typing import Any

from trace_bench.sandbox import codec, denials, mode, policy, server
from trace_bench.sandbox.limits import STATUSES, SandboxLimits, SandboxResult, tail

_DEFAULT_LIMITS = SandboxLimits()
_TEXT_LIMIT = 8000


def _check_target(target: str) -> str:
    if not isinstance(target, str) or target.count(":") != 1 or not all(target.split(":")):
        raise ValueError(f"sandbox target must look like 'package.module:function', got {target!r}")
    return target.split(":")[0].split(".")[0]


def run_sandboxed(target: str, payload: Any, limits: SandboxLimits = _DEFAULT_LIMITS, *,
                  packages: tuple[str, ...] = ()) -> SandboxResult:
    """Run ``target(payload)`` (``"package.module:function"``, our code) in a sandboxed child.

    ``payload`` must be plain data (:mod:`.codec`); ``packages`` names further top-level
    packages the target imports that live outside site-packages (the target's own package is
    always visible).  Never raises for anything the child does; raises ``ValueError`` or
    ``TypeError`` for a malformed target or payload (caller bugs) and
    :class:`~trace_bench.sandbox.mode.SandboxUnavailable` when no sandbox may run here.
    """
    call = start_call(target, payload, limits, packages=packages)
    return call if isinstance(call, SandboxResult) else call.finish()


class Call:
    """A launched call: the job's ends of its result, status and cancel pipes."""

    def __init__(self, handle: server.ZygoteHandle, result_r: int, status_r: int, cancel_w: int,
                 limits: SandboxLimits, started: float, target: str = "") -> None:
        self.handle, self.result_r, self.status_r = handle, result_r, status_r
        self.cancel = _Cancel(cancel_w)
        self.limits, self.started, self.target = limits, started, target

    def finish(self) -> SandboxResult:
        """Wait for the call to end (or for its deadline) and read what it left."""
        try:
            result = _collect(self.handle, self.result_r, self.status_r, self.cancel,
                              self.started + self.limits.wall_s + policy.GRACE_S, self.limits)
        finally:
            self.cancel()
        result.mode = self.handle.mode
        result.wall_s = time.monotonic() - self.started
        mode.record_use(self.handle.mode)
        denials.note(self.target, result)  # reward-hacking signals for the job's audit
        return result


def start_call(target: str, payload: Any, limits: SandboxLimits, *, packages: tuple[str, ...] = (),
               channels: tuple[int, ...] = ()) -> Call | SandboxResult:
    """Launch a call without waiting for it (a result instead when the sandbox cannot take it).

    ``channels``: file descriptors handed to the child as ``payload["channels"]`` (e.g. the pipe
    ends that connect a checker to a candidate, :mod:`.rpc`); the caller keeps its own copies.
    """
    top = _check_target(target)
    request = {"target": target, "payload": payload, "limits": limits.as_dict(), "channels": len(channels),
               "sys_path": [os.path.abspath(p) for p in sys.path if isinstance(p, str) and p]}
    try:
        body = codec.encode(request)
    except codec.CodecError as exc:
        raise TypeError(f"sandbox payload is not plain data: {exc}") from exc
    needed = frozenset({top, *packages})
    started = time.monotonic()
    for attempt in range(2):  # a sandbox that died (e.g. killed after a hung call) is restarted once
        handle = mode.handle_for(needed)
        result_r, result_w = os.pipe()
        status_r, status_w = os.pipe()
        cancel_r, cancel_w = os.pipe()
        try:
            handle.launch(body, [result_w, status_w, cancel_r, *channels])
        except server.ZygoteUnavailable as exc:
            for fd in (result_r, status_r, cancel_w):
                os.close(fd)
            server.discard(handle, kill=True)
            if attempt:
                return SandboxResult("crash", error_type="SandboxUnavailable", message=str(exc), mode=handle.mode)
            continue
        finally:
            for fd in (result_w, status_w, cancel_r):
                os.close(fd)
        return Call(handle, result_r, status_r, cancel_w, limits, started, target)
    raise AssertionError("unreachable")  # pragma: no cover


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
    pending, oversize, early_checked = set(buffers), False, False
    try:
        while pending:
            if result_r not in pending and status_r in pending and not early_checked:
                early_checked = True
                early = _complete_result(bytes(result)) if limits.max_processes == 0 else None
                if early is not None:  # no process can outlive the child: no need to wait for its report
                    return early
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                server.discard(handle, kill=True)
                return SandboxResult("timeout", message=f"wall-clock limit of {limits.wall_s:g}s exceeded (the "
                                                        "sandbox did not end the call; it was restarted)")
            for fd, _event in poller.poll(int(remaining * 1000) + 1):
                buffer, cap = buffers[fd]
                chunk = os.read(fd, 1 << 20)
                if chunk and len(buffer) + len(chunk) <= cap:
                    buffer += chunk
                    continue
                poller.unregister(fd)
                pending.discard(fd)
                if chunk and fd == result_r:
                    oversize = True
                    os.close(result_r)  # the writer gets EPIPE; nothing more is read
                    del buffers[result_r]
                    cancel()  # and its supervisor ends the call now
    finally:
        for fd in buffers:
            os.close(fd)
    return _interpret(bytes(status), bytes(result), oversize, limits)


def _complete_result(result: bytes) -> SandboxResult | None:
    """An ok result, taken as soon as the child closed its result pipe, or None (then wait for the report).

    Only for calls that cannot create processes: the child is exiting (or, if it closed the pipe
    and went on, is killed by its supervisor when the job cancels the call on return).
    """
    try:
        message = codec.decode(result) if result else None
    except codec.CodecError:
        return None
    if not (isinstance(message, dict) and message.get("ok") is True):
        return None
    return SandboxResult("ok", value=message.get("value"), stdout=tail(_text(message.get("stdout"), 1 << 20)),
                         denied_actions=_denied(message))


def _denied(message: dict[str, Any]) -> list[str]:
    denied = message.get("denied_actions")
    return [_text(item, 300) for item in denied[:20]] if isinstance(denied, list) else []


def _text(value: Any, limit: int = _TEXT_LIMIT) -> str:
    return str(value)[:limit] if value is not None else ""


def _interpret(status: bytes, result: bytes, oversize: bool, limits: SandboxLimits) -> SandboxResult:
    try:
        report = codec.decode(status) if status else {}
    except codec.CodecError:
        report = {}
    report = report if isinstance(report, dict) else {}
    stdout = tail(_text(report.get("output"), 1 << 20))
    if report.get("setup_error"):
        return SandboxResult("crash", error_type="SandboxSetupError", stdout=stdout,
                             message=f"the sandbox could not set up the call: {_text(report['setup_error'])}")
    if oversize:
        return SandboxResult("error", error_type="ResultTooLarge", stdout=stdout,
                             message=f"the result is larger than {policy.RESULT_MAX_BYTES} bytes")
    if report.get("timed_out"):
        return SandboxResult("timeout", stdout=stdout, message=f"wall-clock limit of {limits.wall_s:g}s exceeded")
    if report.get("cancelled"):
        return SandboxResult("crash", error_type="Cancelled", stdout=stdout, message="the job ended the call early")
    wait_status = report.get("wait_status")
    if wait_status != 0 or not result:
        verdict, message = _classify(wait_status, float(report.get("cpu_s") or 0.0), limits)
        return SandboxResult(verdict, stdout=stdout, message=message)  # type: ignore[arg-type]
    try:
        message_data = codec.decode(result)
    except codec.CodecError as exc:
        return SandboxResult("error", error_type="CorruptResult", stdout=stdout, message=str(exc))
    if not isinstance(message_data, dict) or not isinstance(message_data.get("ok"), bool):
        return SandboxResult("error", error_type="CorruptResult", stdout=stdout,
                             message="the result is not a sandbox result message")
    denied_actions = _denied(message_data)
    if message_data["ok"]:
        return SandboxResult("ok", value=message_data.get("value"), stdout=stdout, denied_actions=denied_actions)
    verdict = message_data.get("status")
    verdict = verdict if verdict in STATUSES and verdict not in ("ok", "timeout", "crash") else "error"
    error_type = message_data.get("error_type")
    return SandboxResult(verdict, error_type=_text(error_type, 200) if error_type else None,  # type: ignore[arg-type]
                         message=_text(message_data.get("message")), traceback=_text(message_data.get("traceback")),
                         stdout=stdout, denied_actions=denied_actions)


def _classify(status: Any, cpu_s: float, limits: SandboxLimits) -> tuple[str, str]:
    """(status, message) for a child that ended without a usable result."""
    if not isinstance(status, int) or isinstance(status, bool):
        return "crash", "the sandbox ended the call without a report"
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        name = signal.Signals(sig).name if sig in signal.Signals._value2member_map_ else str(sig)
        if sig == getattr(signal, "SIGXCPU", -1) or (sig == signal.SIGKILL and cpu_s >= limits.effective_cpu_s):
            return "timeout", f"CPU time limit of {limits.effective_cpu_s:g}s exceeded"
        if sig == signal.SIGKILL:
            return "oom", "killed by SIGKILL (most likely for memory)"
        return "crash", f"the sandbox child died from signal {name}"
    code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else status
    return "crash", f"the sandbox child exited with code {code} without a result"


def capabilities() -> dict[str, Any]:
    """Which isolation calls get here (starts the sandbox to find out)."""
    info: dict[str, Any] = {"setting": mode.setting(), "mode": "", "reason": ""}
    try:
        handle = mode.handle_for(frozenset())
    except mode.SandboxUnavailable as exc:
        info["reason"] = str(exc)
        return info
    info.update(handle.info)
    info["mode"] = handle.mode
    return info


def warm_up() -> None:
    """Start the sandbox now (e.g. while a job builds its problem), not on the first evaluation."""
    with contextlib.suppress(mode.SandboxUnavailable, server.ZygoteUnavailable):
        mode.handle_for(frozenset())

"""How a call ended, from what the job read: the child's result (untrusted) and its supervisor's report.

The result bytes are bounded twice before they become Python objects: in size while they are read
(:data:`.policy.RESULT_MAX_BYTES`) and in values before they are parsed
(:data:`.policy.RESULT_MAX_VALUES`), so that decoding a hostile result costs the job a fixed amount
of memory and time.  They are decoded once.  The supervisor's report is trusted: it says how the
child ended (wait status, CPU seconds, a timeout, a cancellation) whatever the child wrote.
"""

from __future__ import annotations

import os
import signal
from typing import Any

from trace_bench.sandbox import codec, policy
from trace_bench.sandbox.limits import DENIALS, STATUSES, SandboxLimits, SandboxResult, tail

_TEXT_LIMIT = 8000


class ResultBytes:
    """The child's result as read, decoded at most once (:meth:`message`)."""

    def __init__(self, data: bytes | bytearray, oversize: bool = False) -> None:
        self.data = data  # filled in place while the call runs
        self.oversize = oversize
        self._empty = False
        self._decoded = False
        self._message: Any = None
        self.error: codec.CodecError | None = None

    @property
    def empty(self) -> bool:
        return self._empty if self._decoded else not self.data

    def message(self) -> Any:
        """The decoded message, or None (then :attr:`error` says why, unless there was nothing)."""
        if not self._decoded:
            self._decoded, self._empty = True, not self.data
            if self.data and not self.oversize:
                try:
                    self._message = codec.decode(self.data, max_values=policy.RESULT_MAX_VALUES)
                except codec.CodecError as exc:
                    self.error = exc
            self.data = b""  # the decoded value is all that is kept
        return self._message


def early_result(result: ResultBytes) -> SandboxResult | None:
    """An ok result, taken as soon as the child closed its result pipe, or None (then wait for the report).

    Only for calls that cannot create processes: the child is exiting (or, if it closed the pipe
    and went on, is killed by its supervisor when the job cancels the call on return).
    """
    message = result.message()
    if not (isinstance(message, dict) and message.get("ok") is True):
        return None
    return SandboxResult("ok", value=message.get("value"), stdout=tail(_text(message.get("stdout"), 1 << 20)),
                         denied_actions=_denied(message))


def report_of(status: bytes) -> dict[str, Any]:
    """The supervisor's report (trusted), or {} when there is none."""
    try:
        report = codec.decode(status) if status else {}
    except codec.CodecError:
        report = {}
    return report if isinstance(report, dict) else {}


def with_record(result: SandboxResult, report: dict[str, Any], delivered: bool) -> SandboxResult:
    """``result`` with what the supervisor measured: refused system calls, writes outside the call's
    directories (strong mode) and CPU time.  ``delivered``: the child wrote a result, which its own
    code does only after ending its record of writes, so a broken record then means tampering (a call
    ended without a result, by a limit or a crash, leaves its record unended by nature)."""
    refused = report.get("refused")
    if isinstance(refused, dict):
        result.refused = {str(name)[:60]: int(count) for name, count in refused.items()
                          if isinstance(count, int) and not isinstance(count, bool) and count > 0}
    attempts = report.get("attempts")
    if isinstance(attempts, dict):
        count, paths = attempts.get("count"), attempts.get("paths")
        if isinstance(count, int) and not isinstance(count, bool) and count > 0:
            result.write_attempts = count
        if isinstance(paths, list):
            result.write_attempt_paths = [_text(path, 300) for path in paths[:10]]
        result.write_record_closed = delivered and attempts.get("broken") is True
    cpu_s = report.get("cpu_s")
    if isinstance(cpu_s, (int, float)) and not isinstance(cpu_s, bool) and cpu_s >= 0:
        result.cpu_s = float(cpu_s)
    return result


def interpret(status: bytes, result: ResultBytes, limits: SandboxLimits) -> SandboxResult:
    """The call's result from the supervisor's report and, where it says the child ended well, its result."""
    report = report_of(status)
    delivered = not result.empty
    return with_record(_interpret(report, result, limits), report, delivered)


def _interpret(report: dict[str, Any], result: ResultBytes, limits: SandboxLimits) -> SandboxResult:
    stdout = tail(_text(report.get("output"), 1 << 20))
    if report.get("setup_error"):
        return SandboxResult("crash", error_type="SandboxSetupError", stdout=stdout,
                             message=f"the sandbox could not set up the call: {_text(report['setup_error'])}")
    if result.oversize:
        return too_large(f"the result is larger than {policy.RESULT_MAX_BYTES:,} bytes", stdout)
    if report.get("timed_out"):
        return SandboxResult("timeout", stdout=stdout, message=f"wall-clock limit of {limits.wall_s:g}s exceeded",
                             denial="timeout")
    if report.get("cancelled"):
        return SandboxResult("crash", error_type="Cancelled", stdout=stdout, message="the job ended the call early")
    wait_status = report.get("wait_status")
    if wait_status != 0 or result.empty:
        verdict, message = classify(wait_status, float(report.get("cpu_s") or 0.0), limits)
        denial = {"timeout": "timeout", "oom": "memory"}.get(verdict)
        return SandboxResult(verdict, stdout=stdout, message=message, denial=denial)  # type: ignore[arg-type]
    message_data = result.message()
    if isinstance(result.error, codec.TooManyValues):
        return too_large(f"the result is too large to decode: {result.error}", stdout)
    if result.error is not None:
        return SandboxResult("error", error_type="CorruptResult", stdout=stdout, message=str(result.error),
                             denial="forged_result")
    if not isinstance(message_data, dict) or not isinstance(message_data.get("ok"), bool):
        return SandboxResult("error", error_type="CorruptResult", stdout=stdout, denial="forged_result",
                             message="the result is not a sandbox result message")
    denied_actions = _denied(message_data)
    if message_data["ok"]:
        return SandboxResult("ok", value=message_data.get("value"), stdout=stdout, denied_actions=denied_actions)
    named = message_data.get("status")
    verdict = named if named in STATUSES and named not in ("ok", "timeout", "crash") else "error"
    error_type = message_data.get("error_type")
    denial = None
    if verdict == "denied":
        denial = message_data.get("denial") if message_data.get("denial") in DENIALS else "syscall"
    elif verdict == "oom":
        denial = "memory"
    return SandboxResult(verdict, error_type=_text(error_type, 200) if error_type else None,  # type: ignore[arg-type]
                         message=_text(message_data.get("message")), traceback=_text(message_data.get("traceback")),
                         stdout=stdout, denied_actions=denied_actions, denial=denial)  # type: ignore[arg-type]


def too_large(message: str, stdout: str = "") -> SandboxResult:
    return SandboxResult("error", error_type="ResultTooLarge", stdout=stdout, message=message,
                         denial="result_too_large")


def classify(status: Any, cpu_s: float, limits: SandboxLimits) -> tuple[str, str]:
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


def _denied(message: dict[str, Any]) -> list[str]:
    denied = message.get("denied_actions")
    return [_text(item, 300) for item in denied[:20]] if isinstance(denied, list) else []


def _text(value: Any, limit: int = _TEXT_LIMIT) -> str:
    return str(value)[:limit] if value is not None else ""

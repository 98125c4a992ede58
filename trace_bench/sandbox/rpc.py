"""A checker calls a candidate's function that lives in another sandboxed process.

Unit tests (HumanEval's ``check``) must call the candidate many times, and a candidate that ran
in the checker's process could rewrite the checker or the result.  So the job starts two
sandboxed calls joined by two pipes: the *candidate* call loads the untrusted code and serves
its function (:func:`serve`); the *checker* call, which never executes candidate code, calls it
through a :class:`CandidateProxy`.  Arguments and results cross as :mod:`.codec` frames (a
4-byte big-endian length, then the encoding), so what comes back is plain data whose ``==`` and
``repr`` are Python's own, never an object the candidate crafted.

Frames: the candidate first sends ``{"ready": true}`` or ``{"ready": false, "failure": {...}}``;
then each request ``{"args": [...], "kwargs": {...}}`` gets ``{"ok": true, "value": ...}`` or
``{"ok": false, "error_type", "message", "line"}``.
"""

from __future__ import annotations

import builtins
import os
import traceback
from collections.abc import Callable
from typing import Any

from trace_bench._util.errors import TraceBenchError
from trace_bench.sandbox import codec
from trace_bench.sandbox.frames import read_value, write_value
from trace_bench.sandbox.limits import SandboxLimits, SandboxResult

MAX_FRAME_BYTES = 16 << 20


class CandidateGone(TraceBenchError, RuntimeError):
    """The candidate's process ended (crash, time or memory limit) or sent something unreadable."""


def read_frame(fd: int) -> Any:
    """The next value on ``fd``; ``EOFError`` at the end, :class:`CandidateGone` for a bad frame."""
    try:
        return read_value(fd, MAX_FRAME_BYTES)
    except codec.CodecError as exc:
        raise CandidateGone(f"the candidate sent something that is not plain data: {exc}") from exc


def _candidate_line(exc: BaseException, filename: str) -> int | None:
    line = None
    for frame in traceback.extract_tb(exc.__traceback__):
        if frame.filename == filename:
            line = frame.lineno
    return line


def serve(payload: dict[str, Any], function: Callable[..., Any] | None, failure: dict[str, Any] | None = None,
          *, filename: str = "<candidate>") -> None:
    """Candidate side: answer calls on ``payload["channels"]`` until the checker hangs up."""
    requests, replies = payload["channels"]
    write_value(replies, {"ready": function is not None, "failure": failure})
    if function is None:
        return
    while True:
        try:
            request = read_frame(requests)
        except (EOFError, CandidateGone):
            return
        try:
            value = function(*request.get("args", ()), **request.get("kwargs", {}))
            write_value(replies, {"ok": True, "value": value})
        except codec.CodecError as exc:
            write_value(replies, {"ok": False, "error_type": "TypeError", "line": None,
                                  "message": f"the function returned a value that is not plain data ({exc})"})
        except BaseException as exc:  # noqa: B036 - reported to the checker, like any exception of the call
            write_value(replies, {"ok": False, "error_type": type(exc).__name__, "message": str(exc)[:2000],
                                  "line": _candidate_line(exc, filename)})


class CandidateProxy:
    """Checker side: a callable standing for the candidate's function."""

    def __init__(self, payload: dict[str, Any]) -> None:
        self.requests, self.replies = payload["channels"]
        try:
            hello = read_frame(self.replies)
        except EOFError as exc:
            raise CandidateGone("the candidate's process ended before it was ready") from exc
        self.ready = isinstance(hello, dict) and hello.get("ready") is True
        failure = hello.get("failure") if isinstance(hello, dict) else None
        self.failure: dict[str, Any] = failure if isinstance(failure, dict) else {}
        self.last_call: tuple[tuple[Any, ...], dict[str, Any]] | None = None  # what a checker reports of a failure
        self.last_value: Any = None

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.last_call, self.last_value = (args, kwargs), None
        try:
            write_value(self.requests, {"args": list(args), "kwargs": kwargs})
            reply = read_frame(self.replies)
        except (EOFError, BrokenPipeError) as exc:
            raise CandidateGone("the candidate's process ended (it crashed or hit a limit)") from exc
        if not isinstance(reply, dict):
            raise CandidateGone("the candidate sent a malformed reply")
        if reply.get("ok") is True:
            self.last_value = reply.get("value")
            return self.last_value
        name = str(reply.get("error_type") or "Exception")
        kind = getattr(builtins, name, None)
        if not (isinstance(kind, type) and issubclass(kind, Exception)):
            kind = RuntimeError
        error = kind(str(reply.get("message") or ""))
        error.candidate_error_type = name  # type: ignore[attr-defined]
        error.candidate_line = reply.get("line") if isinstance(reply.get("line"), int) else None  # type: ignore[attr-defined]
        raise error


def run_with_candidate(checker: str, checker_payload: dict[str, Any], candidate: str,
                       candidate_payload: dict[str, Any], limits: SandboxLimits, *,
                       packages: tuple[str, ...] = (),
                       candidate_packages: tuple[str, ...] | None = None) -> tuple[SandboxResult, SandboxResult]:
    """Job side: run both calls joined by pipes; returns (checker's result, candidate's result).

    ``candidate_packages`` (default ``packages``) is what the candidate's sandbox shows; it may hide
    what the checker needs (``hide:<package>``, e.g. a benchmark package with the hidden data)."""
    from trace_bench.sandbox.runner import Call, start_call

    to_candidate_r, to_candidate_w = os.pipe()
    to_checker_r, to_checker_w = os.pipe()
    try:
        served = start_call(candidate, candidate_payload, limits,
                            packages=packages if candidate_packages is None else candidate_packages,
                            channels=(to_candidate_r, to_checker_w))
        checking = start_call(checker, checker_payload, limits, packages=packages,
                              channels=(to_candidate_w, to_checker_r), candidate=False)
    finally:
        for fd in (to_candidate_r, to_candidate_w, to_checker_r, to_checker_w):
            os.close(fd)
    verdict = checking.finish() if isinstance(checking, Call) else checking
    if isinstance(served, Call):
        served.cancel()  # the checker is done: whatever the candidate still does is of no use
        served = served.finish()
    return verdict, served

"""The two sandboxed halves of a HumanEval check: the candidate's process and the checker's.

:func:`serve_candidate` loads the untrusted code and answers calls to its entry point;
:func:`run_check` runs the problem's prompt helpers and ``check`` function against a
:class:`~trace_bench.sandbox.rpc.CandidateProxy`, so no candidate code runs where the verdict is
decided, and every value the tests compare is plain data.  The verdict is a small dict that
the job validates (:mod:`.guide`).

A failing assertion is reported by the call it failed on and what the function returned there
(``candidate(3, 5) returned None``): never the assertion's line or the expected value, which would
hand the optimizer the tests' answers.  This module imports nothing heavy: the sandbox imports it in
every call.
"""

from __future__ import annotations

import traceback
from typing import Any

from trace_bench.sandbox.rpc import CandidateGone, CandidateProxy, serve

CANDIDATE_FILE = "<candidate>"
TESTS_FILE = "<humaneval-tests>"
KINDS = ("passed", "syntax", "definition", "missing", "assertion", "error")
_VALUE_CHARS = 200


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _VALUE_CHARS else text[: _VALUE_CHARS - 3] + "..."


def _line(source: str, lineno: int | None) -> str:
    lines = source.splitlines()
    return lines[lineno - 1].strip() if lineno and 0 < lineno <= len(lines) else ""


def _failed_call(candidate: CandidateProxy) -> tuple[str, str]:
    """(the last call the tests made, what it returned), as text; empty when they made none."""
    if candidate.last_call is None:
        return "", ""
    args, kwargs = candidate.last_call
    shown = ", ".join([*(_short(a) for a in args), *(f"{k}={_short(v)}" for k, v in kwargs.items())])
    return f"candidate({shown})", _short(candidate.last_value)


def serve_candidate(payload: dict[str, Any]) -> None:
    """Candidate's process: run the code, then serve its entry point (or say why it cannot)."""
    code, entry = str(payload["code"]), str(payload["entry_point"])
    namespace: dict[str, Any] = {"__name__": "__candidate__"}
    try:
        compiled = compile(code, CANDIDATE_FILE, "exec")
    except SyntaxError as exc:
        serve(payload, None, {"kind": "syntax", "line": (exc.text or "").strip(),
                              "message": f"SyntaxError: {exc.msg} (line {exc.lineno})"})
        return
    try:
        exec(compiled, namespace)  # noqa: S102 - the point of this process
    except BaseException as exc:  # noqa: B036
        serve(payload, None, {"kind": "definition", "line": "", "message": f"{type(exc).__name__}: {exc}"})
        return
    function = namespace.get(entry)
    if not callable(function):
        serve(payload, None, {"kind": "missing", "line": "",
                              "message": f"the code does not define a function named {entry!r}"})
        return
    serve(payload, function, filename=CANDIDATE_FILE)


def run_check(payload: dict[str, Any]) -> dict[str, Any]:
    """Checker's process: the verdict ``{"passed", "kind", "message", "line"}`` (see :data:`KINDS`).

    The tests run in a namespace holding the prompt's own definitions (HumanEval tests call its
    helpers), with the entry point replaced by the proxy.  The candidate's code is never here.
    """
    try:
        candidate = CandidateProxy(payload)
    except CandidateGone as exc:
        return {"passed": False, "kind": "error", "line": "", "message": str(exc)}
    if not candidate.ready:
        failure = candidate.failure
        kind = failure.get("kind") if failure.get("kind") in ("syntax", "definition", "missing") else "error"
        return {"passed": False, "kind": kind, "line": str(failure.get("line") or ""),
                "message": str(failure.get("message") or "the candidate could not be loaded")}
    tests, entry = str(payload["test"]), str(payload["entry_point"])
    code = str(payload.get("code") or "")
    namespace: dict[str, Any] = {"__name__": "__check__"}
    exec(compile(str(payload.get("prompt") or ""), "<humaneval-prompt>", "exec"), namespace)  # noqa: S102 - dataset
    namespace[entry] = candidate
    try:
        exec(compile(tests, TESTS_FILE, "exec"), namespace)  # noqa: S102 - the dataset's tests
        namespace["check"](candidate)
    except AssertionError:
        call, returned = _failed_call(candidate)
        return {"passed": False, "kind": "assertion", "line": call, "message": f"it returned {returned}" if call else ""}
    except BaseException as exc:  # noqa: B036
        name = getattr(exc, "candidate_error_type", type(exc).__name__)
        message = f"{name}: {exc}"
        where = getattr(exc, "candidate_line", None)
        if where is not None:
            message += f" (at candidate line {where}: {_line(code, where)})"
        call = _failed_call(candidate)[0] if hasattr(exc, "candidate_error_type") else ""
        return {"passed": False, "kind": "error", "line": call, "message": message,
                "traceback": "".join(traceback.format_exception(exc))[-2000:]}
    return {"passed": True, "kind": "passed", "line": "", "message": ""}

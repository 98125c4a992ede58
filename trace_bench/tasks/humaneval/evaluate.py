"""The two sandboxed halves of a HumanEval check: the candidate's process and the checker's.

:func:`serve_candidate` loads the untrusted code and answers calls to its entry point;
:func:`run_check` runs the problem's prompt helpers and ``check`` function against a
:class:`~trace_bench.sandbox.rpc.CandidateProxy`, so no candidate code runs where the verdict is
decided, and every value the tests compare is plain data.  The verdict is a small dict that
the job validates (:mod:`.guide`).

A failing assertion is reported with its source line and, for ``assert left == right`` lines, the
two values, so the optimizer sees what the function returned and what was expected.  This module
imports nothing heavy: the sandbox imports it in every call.
"""

from __future__ import annotations

import ast
import sys
import traceback
from types import TracebackType
from typing import Any

from trace_bench.sandbox.rpc import CandidateGone, CandidateProxy, serve

CANDIDATE_FILE = "<candidate>"
TESTS_FILE = "<humaneval-tests>"
KINDS = ("passed", "syntax", "definition", "missing", "assertion", "error")
_VALUE_CHARS = 200


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= _VALUE_CHARS else text[: _VALUE_CHARS - 3] + "..."


def _frame_in(tb: TracebackType | None, filename: str) -> tuple[Any, int] | None:
    """The innermost traceback frame executing ``filename``, with its line number."""
    found = None
    while tb is not None:
        if tb.tb_frame.f_code.co_filename == filename:
            found = (tb.tb_frame, tb.tb_lineno)
        tb = tb.tb_next
    return found


def _line(source: str, lineno: int | None) -> str:
    lines = source.splitlines()
    return lines[lineno - 1].strip() if lineno and 0 < lineno <= len(lines) else ""


def _explain_assert(statement: str, frame: Any) -> str:
    """For ``assert a == b``: evaluate both sides again in the test's frame and show them."""
    try:
        node = ast.parse(statement).body[0]
    except (SyntaxError, IndexError):
        return ""
    test = node.test if isinstance(node, ast.Assert) else None
    if not (isinstance(test, ast.Compare) and len(test.ops) == 1 and isinstance(test.ops[0], ast.Eq)):
        return ""
    scope = {**frame.f_globals, **frame.f_locals}
    try:
        got = eval(compile(ast.Expression(test.left), TESTS_FILE, "eval"), scope)  # noqa: S307 - sandboxed
        expected = eval(compile(ast.Expression(test.comparators[0]), TESTS_FILE, "eval"), scope)  # noqa: S307
    except BaseException:  # noqa: B036 - the candidate may fail again on the second call
        return ""
    return f"got {_short(got)}, expected {_short(expected)}"


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
    except AssertionError as exc:
        located = _frame_in(sys.exc_info()[2], TESTS_FILE)
        line = _line(tests, located[1]) if located else ""
        detail = _explain_assert(line, located[0]) if located else ""
        message = "; ".join(part for part in (str(exc), detail) if part)
        return {"passed": False, "kind": "assertion", "line": line, "message": message}
    except BaseException as exc:  # noqa: B036
        located = _frame_in(sys.exc_info()[2], TESTS_FILE)
        name = getattr(exc, "candidate_error_type", type(exc).__name__)
        message = f"{name}: {exc}"
        where = getattr(exc, "candidate_line", None)
        if where is not None:
            message += f" (at candidate line {where}: {_line(code, where)})"
        return {"passed": False, "kind": "error", "line": _line(tests, located[1]) if located else "",
                "message": message, "traceback": "".join(traceback.format_exception(exc))[-2000:]}
    return {"passed": True, "kind": "passed", "line": "", "message": ""}

"""The trusted HumanEval checker that runs INSIDE the sandbox child.

``run_check(payload)`` executes the candidate code, then the problem's ``check`` function against
the candidate's entry point, and returns a small plain dict.  It is our code, but it executes
untrusted code, so it is only ever called through :func:`trace_bench.sandbox.run_sandboxed`; the
sandbox enforces time, memory, file and network limits, and a loop or crash costs only the child.

A failing assertion is reported with its source line and, for ``assert left == right`` lines, the
two values, so the optimizer sees what the function returned and what was expected.  This module
imports nothing heavy: the sandbox imports it in every child.
"""

from __future__ import annotations

import ast
import sys
import traceback
from types import TracebackType
from typing import Any

CANDIDATE_FILE = "<candidate>"
TESTS_FILE = "<humaneval-tests>"
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


def _line(source: str, lineno: int) -> str:
    lines = source.splitlines()
    return lines[lineno - 1].strip() if 0 < lineno <= len(lines) else ""


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
    except BaseException:  # noqa: B036 - the candidate may raise anything, even on the second call
        return ""
    return f"got {_short(got)}, expected {_short(expected)}"


def run_check(payload: dict[str, Any]) -> dict[str, Any]:
    """Run the candidate against the tests: ``{"passed", "kind", "message", "line"}``.

    ``kind`` is ``passed``, ``syntax`` (the code does not compile), ``definition`` (running the
    module-level code failed), ``missing`` (no entry-point function), ``assertion`` (a test failed)
    or ``error`` (the candidate raised while being tested).
    """
    code, tests, entry = str(payload["code"]), str(payload["test"]), str(payload["entry_point"])
    namespace: dict[str, Any] = {"__name__": "__candidate__"}
    try:
        compiled = compile(code, CANDIDATE_FILE, "exec")
    except SyntaxError as exc:
        return {"passed": False, "kind": "syntax", "line": (exc.text or "").strip(),
                "message": f"SyntaxError: {exc.msg} (line {exc.lineno})"}
    try:
        exec(compiled, namespace)  # noqa: S102 - the point of this module; runs in the sandbox
    except BaseException as exc:  # noqa: B036
        return {"passed": False, "kind": "definition", "line": "", "message": f"{type(exc).__name__}: {exc}"}
    function = namespace.get(entry)
    if not callable(function):
        return {"passed": False, "kind": "missing", "line": "",
                "message": f"the code does not define a function named {entry!r}"}
    try:  # the tests share the candidate's namespace, as in HumanEval: they call the prompt's helpers
        exec(compile(tests, TESTS_FILE, "exec"), namespace)  # noqa: S102
        namespace["check"](function)
    except AssertionError as exc:
        located = _frame_in(sys.exc_info()[2], TESTS_FILE)
        line = _line(tests, located[1]) if located else ""
        detail = _explain_assert(line, located[0]) if located else ""
        message = "; ".join(part for part in (str(exc), detail) if part)
        return {"passed": False, "kind": "assertion", "line": line, "message": message}
    except BaseException as exc:  # noqa: B036
        tb = sys.exc_info()[2]
        located = _frame_in(tb, TESTS_FILE)
        where = _frame_in(tb, CANDIDATE_FILE)
        message = f"{type(exc).__name__}: {exc}"
        if where is not None:
            message += f" (at candidate line {where[1]}: {_line(code, where[1])})"
        return {"passed": False, "kind": "error", "line": _line(tests, located[1]) if located else "",
                "message": message, "traceback": "".join(traceback.format_exception(exc))[-2000:]}
    return {"passed": True, "kind": "passed", "line": "", "message": ""}

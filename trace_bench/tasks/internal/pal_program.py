"""The trusted runner of PAL programs; it runs INSIDE a sandbox child, never in the job process.

A PAL program reads ``question`` and sets ``result``.  ``run_program`` executes one program once
per question in a fresh namespace and reports, per question, the result text and the error, if any.
Plain data only.  It reports no time: the job takes the run's CPU time from the sandbox's supervisor
(a figure from this process would be the program's to rewrite).
"""

from __future__ import annotations

from typing import Any


def strip_fences(code: str) -> str:
    """The code inside a Markdown fence, when the whole text is one fenced block."""
    text = code.strip()
    if not text.startswith("```"):
        return text
    lines = text.splitlines()[1:]
    if lines and lines[-1].strip().startswith("```"):
        lines = lines[:-1]
    return "\n".join(lines)


def run_program(payload: dict[str, Any]) -> list[dict[str, Any]]:
    source = strip_fences(str(payload["code"]))
    try:
        compiled = compile(source, "<pal-program>", "exec")
    except SyntaxError as exc:
        failure = f"SyntaxError: {exc.msg} (line {exc.lineno})"
        return [{"result": None, "error": failure} for _ in payload["questions"]]
    outcomes = []
    for question in payload["questions"]:
        namespace: dict[str, Any] = {"question": question}
        error: str | None = None
        try:
            exec(compiled, namespace)  # noqa: S102 - the purpose of this module; runs in the sandbox
        except BaseException as exc:  # noqa: B036 - candidate code may raise anything
            error = f"{type(exc).__name__}: {exc}"
        result = None if error or "result" not in namespace else str(namespace["result"])
        if error is None and result is None:
            error = "the program did not set 'result'"
        outcomes.append({"result": result, "error": error})
    return outcomes

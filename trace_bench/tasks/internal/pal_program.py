"""The trusted runner of PAL programs; it runs INSIDE a sandbox child, never in the job process.

A PAL program reads ``question`` and sets ``result``.  ``run_program`` executes one program once
per question in a fresh namespace and reports, per question, the result text, the CPU seconds
(``time.process_time``) the program took, and the error, if any.  Plain data only.
"""

from __future__ import annotations

import time
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
        error = f"SyntaxError: {exc.msg} (line {exc.lineno})"
        return [{"result": None, "cpu_s": 0.0, "error": error} for _ in payload["questions"]]
    outcomes = []
    for question in payload["questions"]:
        namespace: dict[str, Any] = {"question": question}
        started = time.process_time()
        error = None
        try:
            exec(compiled, namespace)  # noqa: S102 - the purpose of this module; runs in the sandbox
        except BaseException as exc:  # noqa: B036 - candidate code may raise anything
            error = f"{type(exc).__name__}: {exc}"
        cpu_s = time.process_time() - started
        result = None if error or "result" not in namespace else str(namespace["result"])
        if error is None and result is None:
            error = "the program did not set 'result'"
        outcomes.append({"result": result, "cpu_s": cpu_s, "error": error})
    return outcomes

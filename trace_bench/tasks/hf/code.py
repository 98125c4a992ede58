"""hf code tasks (``hf:humaneval``, ``hf:mbpp``): rows -> programming requests and sandboxed tests.

A row becomes an input ``{"task_id", "question", "prompt", "entry_point"}`` (``prompt`` is code the
answer continues: HumanEval's signature and docstring; empty for MBPP, whose request is prose) and an
info in the shape :class:`trace_bench.tasks.humaneval.guide.UnitTestGuide` scores: the tests as a
``check(candidate)`` function and the entry point.  MBPP's bare asserts are wrapped into such a
function and its name is read from the reference solution.  Candidate code runs only in the sandbox.
"""

from __future__ import annotations

import ast
import re
import textwrap
from typing import Any

from trace_bench._util.errors import TraceBenchError
from trace_bench.tasks.hf.catalog import HFDataset

INITIAL_INSTRUCTION = "Write the Python function."
STUB_INSTRUCTIONS = (
    "Read the task and its example test, handle edge cases (empty inputs, negatives, ties) and return the "
    "complete function in one ```python block, keeping the required name and signature.",
    "Write a correct, simple implementation; check it against the example before answering.",
)
_CALL = re.compile(r"\b([A-Za-z_]\w*)\s*\(")


class CodeRowError(TraceBenchError, ValueError):
    """A code row lacks what its task needs (tests, a function name)."""


def _entry_from_solution(row: dict[str, Any], tests: list[str]) -> str:
    """MBPP has no entry-point field: the function of the reference solution that the tests call."""
    defined: list[str] = []
    try:
        tree = ast.parse(str(row.get("code", "")))
        defined = [node.name for node in tree.body if isinstance(node, ast.FunctionDef)]
    except SyntaxError:
        pass
    called = [name for test in tests for name in _CALL.findall(test)]
    for name in called:
        if name in defined:
            return name
    builtins_and_asserts = {"assert", "set", "sorted", "list", "tuple", "abs", "round", "len", "isclose", "math"}
    for name in called:
        if name not in builtins_and_asserts:
            return name
    raise CodeRowError(f"cannot tell which function the tests call: {tests[:1]}")


def check_function(tests: list[str], setup: str = "") -> str:
    """``setup`` plus ``def check(candidate):`` running each assert (they call the function by name)."""
    body = "\n".join(textwrap.indent(test.strip(), "    ") for test in tests if test.strip()) or "    pass"
    return f"{setup.strip()}\n\n\ndef check(candidate):\n{body}\n".lstrip()


def code_example(row: dict[str, Any], entry: HFDataset) -> tuple[dict[str, Any], dict[str, Any]]:
    field = entry.test_field or "test"
    if field not in row:
        raise CodeRowError(f"{entry.dataset_id} rows need a '{field}' field; this row has {sorted(row)}")
    question = str(row.get(entry.question_field, "")).strip()
    task_id = str(row.get("task_id", "")) or question[:40]
    raw_tests = row[field]
    if isinstance(raw_tests, (list, tuple)):  # MBPP: bare asserts, plus imports they need
        tests = [str(t) for t in raw_tests]
        setup = "\n".join(str(line) for line in row.get("test_imports") or []) or str(row.get("test_setup_code") or "")
        entry_point = str(row.get(entry.entry_field or "", "") or _entry_from_solution(row, tests))
        test_source, prompt = check_function(tests, setup), ""
        request = (f"{question}\nThe function must be named `{entry_point}`. For example, it must pass:\n"
                   f"{tests[0] if tests else ''}")
    else:  # HumanEval: the prompt is the signature and docstring, the tests define check(candidate)
        entry_point = str(row.get(entry.entry_field or "entry_point", ""))
        test_source, prompt = str(raw_tests), str(row.get(entry.question_field, ""))
        request = f"Complete this function:\n\n```python\n{prompt}```"
    if not entry_point:
        raise CodeRowError(f"{entry.dataset_id}: row {task_id!r} names no function to test")
    info = {"task_type": "code", "task_id": f"{entry.id}/{task_id}", "test": test_source,
            "entry_point": entry_point, "answer": entry_point}
    return {"task_id": info["task_id"], "question": request, "prompt": prompt, "entry_point": entry_point}, info

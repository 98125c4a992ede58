"""Scoring candidate code by running the problem's unit tests in the sandbox.

Candidate code is untrusted (an LLM wrote it, and optimizers reward-hack), so it runs in a
sandboxed process of its own (:func:`~trace_bench.tasks.humaneval.evaluate.serve_candidate`)
and the tests run in another one that holds no candidate code
(:func:`~trace_bench.tasks.humaneval.evaluate.run_check`), calling the function through a pipe
with plain data (:mod:`trace_bench.sandbox.rpc`).  The job accepts the checker's verdict only in
its documented form.  The score is HumanEval's: 1 when every test passes, else 0.  The feedback
names the call a test failed on and the value the function returned there (never the test's line or
its expected value), or says why the code never got that far (syntax error, exception, timeout,
memory, a forbidden operation).  For a held-out item (``held_out`` in its info: the held-out split's
tests) it says only whether they passed: a held-out test never appears in feedback.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Any

from trace_bench.tasks.guide import Guide

CHECKER = "trace_bench.tasks.humaneval.evaluate:run_check"
CANDIDATE = "trace_bench.tasks.humaneval.evaluate:serve_candidate"


def _prompt(reference: dict[str, Any]) -> str:
    """The problem's prompt (its helpers are what the tests may call besides the candidate)."""
    if isinstance(reference.get("prompt"), str):
        return reference["prompt"]
    from trace_bench.tasks.humaneval.data import load_problems, parse_task_id

    index = parse_task_id(str(reference.get("task_id", "")))
    return load_problems()[index].prompt if index is not None else ""


def _verdict(value: Any) -> dict[str, str] | None:
    """The checker's verdict if it has the documented form, else None."""
    if not isinstance(value, dict) or not isinstance(value.get("passed"), bool):
        return None
    from trace_bench.tasks.humaneval.evaluate import KINDS

    kind = value.get("kind")
    if kind not in KINDS or (kind == "passed") != value["passed"]:
        return None
    return {"kind": str(kind), "message": str(value.get("message") or "")[:2000], "line": str(value.get("line") or "")[:500]}
_CACHE_SIZE = 512


def _describe_check(task_id: str, value: dict[str, Any]) -> str:
    kind, message, line = value.get("kind"), value.get("message", ""), value.get("line", "")
    if kind == "assertion":
        if not line:
            return f"{task_id}: a test failed."
        return f"{task_id}: a test failed on `{line}`" + (f": {message}" if message else "") + "."
    if kind == "error":
        where = f" when called as `{line}`" if line else ""
        return f"{task_id}: the function raised {message}{where}."
    if kind == "syntax":
        return f"{task_id}: the code does not compile: {message}" + (f" at `{line}`" if line else "") + "."
    if kind == "definition":
        return f"{task_id}: running the module-level code failed: {message}."
    return f"{task_id}: {message}."


class UnitTestGuide(Guide):
    """``response`` is the candidate source; ``reference`` is a problem's info (id, entry point, tests).

    Results are cached per (task, code): the checker is deterministic for a given candidate, and
    trainers re-score unchanged code often.
    """

    def __init__(self, *, timeout_s: float = 10.0, memory_mb: int = 1024) -> None:
        from trace_bench.sandbox import require

        require("trace_bench.tasks.humaneval.evaluate")  # a job that cannot sandbox its candidates fails now, saying why
        self.timeout_s = float(timeout_s)
        self.memory_mb = int(memory_mb)
        self._cache: OrderedDict[str, tuple[float, str]] = OrderedDict()
        self._lock = threading.Lock()

    def _key(self, code: str, reference: dict[str, Any]) -> str:
        tests = hashlib.sha256(str(reference.get("test", "")).encode()).hexdigest()
        return hashlib.sha256(f"{reference['task_id']}\0{tests}\0{code}".encode()).hexdigest()

    def get_feedback(self, query: Any, response: Any, reference: Any = None,
                     **kwargs: Any) -> tuple[float, str]:
        if not isinstance(reference, dict) or "test" not in reference:
            raise ValueError("UnitTestGuide needs a HumanEval problem info as reference")
        code = "" if response is None else str(response)
        key = self._key(code, reference)
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        outcome = self.check(code, reference)
        if reference.get("held_out"):
            task_id = reference["task_id"]
            outcome = (outcome[0], f"{task_id}: the held-out tests passed." if outcome[0] == 1.0 else
                       f"{task_id}: the held-out tests failed (which, and how, is not shown).")
        with self._lock:
            self._cache[key] = outcome
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return outcome

    def check(self, code: str, reference: dict[str, Any]) -> tuple[float, str]:
        from trace_bench.sandbox import SandboxLimits
        from trace_bench.sandbox.rpc import run_with_candidate

        task_id, entry = reference["task_id"], reference["entry_point"]
        limits = SandboxLimits(wall_s=self.timeout_s, memory_mb=self.memory_mb)
        checker = {"test": reference["test"], "entry_point": entry, "prompt": _prompt(reference), "code": code}
        verdict, served = run_with_candidate(CHECKER, checker, CANDIDATE, {"code": code, "entry_point": entry}, limits)
        refused = served.denied_actions[:3]
        refused_text = f" The sandbox refused: {'; '.join(refused)}." if refused else ""
        value = _verdict(verdict.value) if verdict.ok else None
        if value is not None and value["kind"] == "passed":
            return 1.0, f"{task_id}: all tests passed.{refused_text}"
        result = served if served.status in ("timeout", "oom", "denied") else verdict
        if value is not None and result is verdict:
            return 0.0, _describe_check(task_id, value) + refused_text
        if result.ok:  # a verdict in no documented form
            return 0.0, f"{task_id}: evaluation failed: the checker's verdict is malformed."
        if result.status == "timeout":
            return 0.0, (f"{task_id}: timed out after {self.timeout_s:g}s; the code loops forever or is far "
                         f"too slow ({result.message}).")
        if result.status == "oom":
            return 0.0, f"{task_id}: ran out of memory (limit {self.memory_mb} MB)."
        if result.status == "denied":
            return 0.0, (f"{task_id}: the code attempted a forbidden operation ({result.describe()}); "
                         "solutions may not write files, start processes or use the network.")
        return 0.0, f"{task_id}: evaluation failed: {result.describe()}."

    def __deepcopy__(self, memo: dict[int, Any]) -> UnitTestGuide:
        return UnitTestGuide(timeout_s=self.timeout_s, memory_mb=self.memory_mb)

"""Scoring candidate code by running the problem's unit tests in the sandbox.

Candidate code is untrusted (an LLM wrote it), so it never runs in the job process: the trusted
checker :func:`trace_bench.tasks.humaneval.evaluate.run_check` runs in a sandbox child with a time
and memory limit.  The score is HumanEval's: 1 when every test passes, else 0.  The feedback names
the failing assertion and the value the function returned, or says why the code never got that far
(syntax error, exception, timeout, memory, a forbidden operation).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Any

from trace_bench.tasks.guide import Guide

TARGET = "trace_bench.tasks.humaneval.evaluate:run_check"
_CACHE_SIZE = 512


def _describe_check(task_id: str, value: dict[str, Any]) -> str:
    kind, message, line = value.get("kind"), value.get("message", ""), value.get("line", "")
    if kind == "assertion":
        return f"{task_id}: test failed: `{line}`" + (f" ({message})" if message else "") + "."
    if kind == "error":
        where = f" while running `{line}`" if line else ""
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
        self.timeout_s = float(timeout_s)
        self.memory_mb = int(memory_mb)
        self._cache: OrderedDict[str, tuple[float, str]] = OrderedDict()
        self._lock = threading.Lock()

    def _key(self, code: str, reference: dict[str, Any]) -> str:
        return hashlib.sha256(f"{reference['task_id']}\0{code}".encode()).hexdigest()

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
        with self._lock:
            self._cache[key] = outcome
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return outcome

    def check(self, code: str, reference: dict[str, Any]) -> tuple[float, str]:
        from trace_bench.sandbox import SandboxLimits, run_sandboxed

        task_id = reference["task_id"]
        payload = {"code": code, "test": reference["test"], "entry_point": reference["entry_point"]}
        limits = SandboxLimits(wall_s=self.timeout_s, memory_mb=self.memory_mb)
        result = run_sandboxed(TARGET, payload, limits)
        if result.status == "ok":
            value = result.value or {}
            refused = (f" The sandbox refused: {'; '.join(result.denied_actions[:3])}."
                       if result.denied_actions else "")
            if value.get("passed"):
                return 1.0, f"{task_id}: all tests passed.{refused}"
            return 0.0, _describe_check(task_id, value) + refused
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

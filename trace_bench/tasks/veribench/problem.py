"""veribench:<name>: write a Lean 4 translation of a program that compiles, without ``sorry``.

The trainable parameter is the Lean source itself (``lean_code``); the guide compiles it with the
real Lean toolchain (:mod:`.lean`) and scores it (``score_dict`` keys in brackets):

- 0 when Lean reports an error in the candidate, times out, crashes, or the candidate declares
  nothing (an empty file compiles, and must not score) [``compiled`` = 0];
- compiled: 0.5 [``compiled`` = 1];
- no ``declaration uses 'sorry'`` warning: +0.5, or +0.25 when the task has unit tests [``no_sorry``];
- unit tests (row field ``unit_tests``, compiled after the candidate): +0.25 x the fraction of
  tests without an error [``tests``].

So 1.0 means a complete, sorry-free translation that passes every test.  The feedback lists Lean's
diagnostics with line:col so an optimizer can fix them.  The original's LLM-judge variants are not
reproduced: a judge score would not be a compiler fact.
"""

from __future__ import annotations

import re
from typing import Any

from trace_bench.tasks.guide import Guide
from trace_bench.tasks.veribench.data import find_row, load_rows
from trace_bench.tasks.veribench.lean import Diagnostic, run_lean

_DECLARATION = re.compile(r"^\s*(?:@\[[^\]]*\]\s*)?(?:private\s+|protected\s+|noncomputable\s+)*"
                          r"(def|theorem|lemma|abbrev|structure|inductive|class|instance|example)\b", re.M)
_TEST = re.compile(r"^(example|theorem|lemma|#guard|#eval)\b", re.M)
_THEOREM = re.compile(r"^\s*(theorem|lemma)\b", re.M)
SKELETON = "-- Lean 4 translation of {name}\n\ndef solution : Nat := sorry\n"


def test_spans(tests: str, offset: int) -> list[tuple[int, int]]:
    """(first line, last line) of each top-level test, in the compiled file's numbering."""
    starts = [tests[: m.start()].count("\n") + 1 + offset for m in _TEST.finditer(tests)]
    end = tests.count("\n") + 1 + offset
    return [(start, (starts[i + 1] - 1) if i + 1 < len(starts) else end) for i, start in enumerate(starts)]


class LeanGuide(Guide):
    """Scores Lean source with the Lean compiler (see module docstring)."""

    def __init__(self, *, timeout_s: float = 120.0, project: str | None = None, memory_mb: int | None = 8192) -> None:
        self.timeout_s = timeout_s
        self.project = project
        self.memory_mb = memory_mb

    def get_score_dict(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> dict[str, float]:
        return self._judge(str(response), reference or {})[0]

    def get_feedback(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> tuple[float, str]:
        scores, feedback = self._judge(str(response), reference or {})
        return _total(scores), feedback

    def _judge(self, candidate: str, info: dict[str, Any]) -> tuple[dict[str, float], str]:
        tests = str(info.get("unit_tests") or "")
        if not _DECLARATION.search(candidate):
            return {"compiled": 0.0, "no_sorry": 0.0}, "The candidate declares nothing: write Lean 4 definitions."
        source = candidate.rstrip("\n") + "\n"
        offset = source.count("\n") + 1
        if tests:
            source += "\n-- unit tests\n" + tests
            offset += 1
        result = run_lean(source, timeout_s=self.timeout_s, project=self.project, memory_mb=self.memory_mb)
        if result.timed_out:
            return {"compiled": 0.0, "no_sorry": 0.0}, f"Lean timed out after {self.timeout_s:g}s."
        if result.crashed:
            tail = result.output.strip()[-600:] or "no output"
            return {"compiled": 0.0, "no_sorry": 0.0}, f"Lean exited with code {result.returncode}: {tail}"
        own = [d for d in result.errors if d.line < offset]
        theorems = len(_THEOREM.findall(candidate))
        if own:
            return {"compiled": 0.0, "no_sorry": 0.0}, _report("Lean reports errors in the candidate", own)
        sorry = [d for d in result.sorry_warnings if d.line < offset]
        scores = {"compiled": 1.0, "no_sorry": 0.0 if sorry else 1.0}
        notes = [f"Compiles ({theorems} theorem(s))."]
        if sorry:
            notes.append(_report("It still uses sorry", sorry))
        if tests:
            spans = test_spans(tests, offset)
            failed = [span for span in spans if any(span[0] <= d.line <= span[1] for d in result.errors)]
            scores["tests"] = (len(spans) - len(failed)) / len(spans) if spans else 1.0
            notes.append(f"Unit tests: {len(spans) - len(failed)}/{len(spans)} pass.")
            if failed:
                notes.append(_report("Failing tests", [d for d in result.errors if d.line >= offset]))
        return scores, " ".join(notes)


def _total(scores: dict[str, float]) -> float:
    if not scores.get("compiled"):
        return 0.0
    if "tests" in scores:
        return 0.5 + 0.25 * scores["no_sorry"] + 0.25 * scores["tests"]
    return 0.5 + 0.5 * scores["no_sorry"]


def _report(title: str, diagnostics: list[Diagnostic], limit: int = 8) -> str:
    lines = [d.render() for d in diagnostics[:limit]]
    more = f" (+{len(diagnostics) - limit} more)" if len(diagnostics) > limit else ""
    return f"{title}{more}:\n" + "\n".join(lines)


def build_trace_problem(task: str = "task_0", data_dir: str | None = None, timeout_s: float = 120.0,
                        lean_project: str | None = None, memory_mb: int | None = 8192,
                        initial_code: str | None = None, **_: Any) -> dict[str, Any]:
    from opto import trace

    row = find_row(load_rows(data_dir), task)
    code = trace.node(initial_code or SKELETON.format(name=row.name), name="lean_code", trainable=True,
                      description="The complete Lean 4 source: definitions translating the program, plus theorems.")
    objective = ("Translate the program into Lean 4 so that it compiles with no errors and no `sorry`"
                 + (" and passes the unit tests" if row.unit_tests else "") + ".\n\n" + row.user_query[:1500])
    return {
        "param": code,
        "guide": LeanGuide(timeout_s=float(timeout_s), project=lean_project, memory_mb=memory_mb),
        "train_dataset": {"inputs": [row.user_query], "infos": [{"name": row.name, "unit_tests": row.unit_tests}]},
        "optimizer_kwargs": {"objective": objective, "memory_size": 5},
        "metadata": {"benchmark": "veribench", "task": row.name, "category": row.category,
                     "optimizes": "Lean 4 source (trainable node 'lean_code')",
                     "scoring": "0 unless it compiles; 0.5 compiled, +no sorry, +unit tests (see docs/external.md)",
                     "has_unit_tests": bool(row.unit_tests)},
        "score_range": [0.0, 1.0],
        # by name: Lean source contains "def ", which the stub would take for Python.  Drafts with a
        # proof left as `sorry`: a sorry-free file already scores 1.0 on a task without unit tests,
        # so a candidate without one would hand the stub the top score
        "stub_candidates": [
            {"lean_code": f"-- Lean 4 translation of {row.name}\n\ndef solution : Nat := 0\n\n"
                          "theorem solution_spec : solution = 0 := by\n  sorry\n"},
            {"lean_code": f"-- Lean 4 translation of {row.name}\n\ndef solution (n : Nat) : Nat := n\n\n"
                          "theorem solution_id (n : Nat) : solution n = n := by\n  sorry\n"},
        ],
    }

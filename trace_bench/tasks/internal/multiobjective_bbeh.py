"""internal:multiobjective_bbeh: a PAL program for boolean expressions, judged on accuracy and CPU time.

The trainable parameter is Python code that reads ``question`` and sets ``result`` to "True" or
"False".  Two objectives: ``accuracy`` (1/0 per question, maximized) and ``execution_time_s`` (CPU
seconds per question, minimized; measured, so it varies slightly between runs).  The program is
LLM-written and therefore runs only in the sandbox (:mod:`.pal_program`), once per candidate for
every question of the problem.  Both objectives are measured on the trusted side: the answers are
compared by the job, and the time is the CPU time of the whole sandboxed run as the sandbox's
supervisor has the kernel account it (``SandboxResult.cpu_s``), divided by the number of questions;
what the program's own process reports about its time is never read (a program that rewrote its
clock scored -1000 s before).  The figure includes the runner's fixed cost of a few milliseconds.

Eval kwargs: ``n_train`` (15), ``n_val`` (5), ``seed`` (42), ``objective_mode`` (``weighted`` or
``pareto``), ``data_file`` (a BBEH task.json / JSONL; default: generated questions),
``timeout_s`` (10: the limit of one sandboxed run over all questions).  Unlike the original, the validation examples are used (for selection).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from typing import Any

from opto import trace

from trace_bench.tasks.guide import Guide
from trace_bench.tasks.internal.boolean_data import load_examples, split
from trace_bench.tasks.objectives import ObjectiveConfig

TARGET = "trace_bench.tasks.internal.pal_program:run_program"
INITIAL_PROGRAM = """\
# `question` holds e.g. "not ( True ) and False is"; set `result` to "True" or "False".
text = question.strip()
if text.endswith(" is"):
    text = text[: -len(" is")]
result = str(eval(text))
"""
_CACHE_SIZE = 256


def _normalized(answer: Any) -> str:
    return "".join(ch for ch in str(answer).lower() if ch.isalnum())


def _outcome(answer: Any, cpu_s: float) -> dict[str, Any]:
    """One question's outcome from the sandbox's plain data, with the time the job measured."""
    answer = answer if isinstance(answer, dict) else {}
    result, error = answer.get("result"), answer.get("error")
    if result is None and not error:
        error = "the program did not set 'result'"
    return {"result": None if result is None else str(result)[:1000], "cpu_s": cpu_s,
            "error": str(error)[:1000] if error else None}


class BooleanProgramGuide(Guide):
    """Runs a candidate program in the sandbox on every known question at once and caches the outcome."""

    def __init__(self, questions: list[str], timeout_s: float = 10.0) -> None:
        self.questions = list(dict.fromkeys(questions))
        self.timeout_s = float(timeout_s)
        self._cache: OrderedDict[str, dict[str, dict[str, Any]]] = OrderedDict()
        self._lock = threading.Lock()

    def _outcomes(self, code: str, question: str) -> dict[str, Any]:
        key = hashlib.sha256(code.encode()).hexdigest()
        with self._lock:
            known = self._cache.get(key)
        if known is not None and question in known:
            return known[question]
        questions = self.questions if question in self.questions else [question]
        by_question = self._run(code, questions)
        with self._lock:
            self._cache.setdefault(key, {}).update(by_question)
            self._cache.move_to_end(key)
            while len(self._cache) > _CACHE_SIZE:
                self._cache.popitem(last=False)
        return by_question[question]

    def _run(self, code: str, questions: list[str]) -> dict[str, dict[str, Any]]:
        from trace_bench.sandbox import SandboxLimits, run_sandboxed

        result = run_sandboxed(TARGET, {"code": code, "questions": questions},
                               SandboxLimits(wall_s=self.timeout_s, memory_mb=512))
        measured = result.cpu_s if result.cpu_s is not None else result.wall_s  # the supervisor's, else the job's clock
        per_question = max(float(measured), 0.0) / max(len(questions), 1)
        if result.ok and isinstance(result.value, list) and len(result.value) == len(questions):
            return {question: _outcome(answer, per_question) for question, answer in zip(questions, result.value,
                                                                                             strict=True)}
        problem = f"the program could not run ({result.status}: {result.message or result.error_type})"
        return {q: {"result": None, "cpu_s": per_question, "error": problem} for q in questions}

    def _judge(self, query: Any, response: Any, reference: Any) -> tuple[bool, str, float]:
        outcome = self._outcomes(str(getattr(response, "data", response)), str(query))
        if outcome["error"]:
            return False, f"EXEC_ERROR: {outcome['error']}", float(outcome["cpu_s"])
        correct = _normalized(outcome["result"]) == _normalized(reference)
        verdict = f"CORRECT: {outcome['result']!r}" if correct else \
            f"WRONG: got {outcome['result']!r}, expected {str(reference)!r}"
        return correct, verdict, float(outcome["cpu_s"])

    def get_feedback(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> tuple[float, str]:
        correct, verdict, cpu_s = self._judge(query, response, reference)
        return float(correct), f"{verdict} (cpu {cpu_s * 1e3:.3f} ms)"

    def get_score_dict(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> dict[str, float]:
        correct, _, cpu_s = self._judge(query, response, reference)
        return {"accuracy": float(correct), "execution_time_s": cpu_s}

    def __deepcopy__(self, memo: dict[int, Any]) -> BooleanProgramGuide:
        return BooleanProgramGuide(self.questions, self.timeout_s)


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    n_train, n_val = int(eval_kwargs.get("n_train", 15)), int(eval_kwargs.get("n_val", 5))
    seed = int(eval_kwargs.get("seed", 42))
    mode = str(eval_kwargs.get("objective_mode", "weighted"))
    rows, source = load_examples(n_train + n_val, seed, eval_kwargs.get("data_file"))
    train, validate = split(rows, n_train, n_val)
    program = trace.node(INITIAL_PROGRAM, name="pal_program", trainable=True,
                         description="Python code that evaluates the boolean expression in `question` "
                                     "and sets `result` to the answer string ('True' or 'False').")
    problem: dict[str, Any] = {
        "param": program,
        "guide": BooleanProgramGuide([r["question"] for r in rows], float(eval_kwargs.get("timeout_s", 10.0))),
        "train_dataset": {"inputs": [r["question"] for r in train], "infos": [r["answer"] for r in train]},
        "optimizer_kwargs": {"objective": "Improve the Python code so it evaluates boolean expressions "
                                          "correctly and fast: it reads 'question' and sets 'result'.",
                             "memory_size": 10},
        "objective_config": ObjectiveConfig(mode=mode, weights={"accuracy": 1.0, "execution_time_s": 0.3},
                                            minimize=frozenset({"execution_time_s"}), seed=seed),
        "metadata": {"benchmark": "multiobjective", "entry": "bbeh_boolean_expressions", "objective_mode": mode,
                     "n_train": len(train), "n_val": len(validate), "data_source": source,
                     "objectives": ["accuracy", "execution_time_s"], "optimizes": "a PAL program (code)",
                     "scoring": "accuracy (max) and CPU seconds (min), sandboxed", "failure_score": 0.0},
        "stub_candidates": [INITIAL_PROGRAM.replace("str(eval(text))", "str(eval(text, {}))"),
                            "result = 'True'\n"],
    }
    if validate:
        problem["validate_dataset"] = {"inputs": [r["question"] for r in validate],
                                       "infos": [r["answer"] for r in validate]}
    return problem

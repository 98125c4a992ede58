"""The guide of a discovery task: the evolve block in, a sandboxed evaluation, a score out.

The trainable parameter holds the evolve block; the guide renders the whole program around it,
runs the evaluator's untrusted half in the sandbox (:mod:`.sandboxed`) and, for split evaluators,
scores the plain data that comes back in this process.  A result dict gives the score
(``combined_score``; absent, the average of the numeric metrics, as OpenEvolve and SkyDiscover
rank), the metrics (every other finite number) and the feedback (``artifacts`` and any text
value).  Anything that goes wrong (the program does not load, the evaluator raises, the data is
malformed, ``combined_score`` is not finite or there is nothing to score, the sandbox refuses or
times out) is a failed evaluation: the task's failure score, with feedback that says what happened.
Evaluations are cached per program, so re-scoring a candidate (the harness measuring a state a
trainer already evaluated) costs nothing.
"""

from __future__ import annotations

import hashlib
import math
import threading
from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from trace_bench.tasks.discovery.sandboxed import LOAD_ONLY, plain_result
from trace_bench.tasks.discovery.task import DiscoveryTask
from trace_bench.tasks.guide import Guide

TARGET = "trace_bench.tasks.discovery.sandboxed:run_program"
_FEEDBACK_CHARS = 3000


@dataclass
class Evaluation:
    ok: bool
    score: float
    feedback: str
    metrics: dict[str, float] = field(default_factory=dict)
    status: str = "ok"
    task_fault: str = ""  # set when the task's evaluator, not the candidate, failed: the job ends task_error


class EvaluatorBroken(RuntimeError):
    """The task's evaluator failed, whatever the candidate: its module does not load (in the sandbox
    or in the job), or its trusted ``score()`` has a code error (a name or an import it lacks).  Raised
    by :meth:`DiscoveryGuide.get_feedback`, so the job ends ``task_error`` with this message instead
    of scoring every candidate as failed."""


# Exceptions of the trusted score() that no data can cause: the evaluator's own code is wrong.
_CODE_ERRORS = (NameError, ImportError, SyntaxError)


def _plain(result: Any) -> dict[str, Any]:
    return plain_result(result) if not (isinstance(result, dict) and set(result) == {"metrics", "artifacts"}) \
        else result


def average_score(result: Any) -> tuple[float, list[str]] | None:
    """The score OpenEvolve and SkyDiscover give a result without ``combined_score``: the mean of its
    finite numeric metrics, flags (booleans) and ``error`` left out; None when there are none (or
    when the result has a ``combined_score``, finite or not: that one decides)."""
    raw = _plain(result).get("metrics") or {}
    if not isinstance(raw, dict) or "combined_score" in raw:
        return None
    values = {str(key): float(value) for key, value in raw.items()
              if key != "error" and not isinstance(value, bool) and isinstance(value, (int, float))
              and math.isfinite(float(value))}
    if not values:
        return None
    return math.fsum(values.values()) / len(values), sorted(values)


def metrics_of(result: Any) -> tuple[dict[str, float], list[str]]:
    """Finite numeric metrics and text feedback of a result dict (hostile data: checked)."""
    plain = _plain(result)
    metrics: dict[str, float] = {}
    notes: list[str] = []
    for key, value in (plain.get("metrics") or {}).items():
        if isinstance(value, bool):
            metrics[str(key)] = float(value)
        elif isinstance(value, (int, float)) and math.isfinite(float(value)):
            metrics[str(key)] = float(value)
        elif isinstance(value, str):
            notes.append(f"{key}: {value[:500]}")
    artifacts = plain.get("artifacts") or {}
    if isinstance(artifacts, dict):
        notes += [f"{key}: {str(text)[:2000]}" if key not in ("summary", "feedback") else str(text)[:2000]
                  for key, text in artifacts.items()]
    return metrics, notes


class DiscoveryGuide(Guide):
    CACHE_SIZE = 128

    def __init__(self, task: DiscoveryTask, failure_score: float, max_processes: int = 0) -> None:
        self.task = task
        self.failure_score = failure_score
        self.max_processes = max_processes  # task.max_processes under bubblewrap; 0 in the weak mode
        self._init_cache()

    def _init_cache(self) -> None:
        self._cache: OrderedDict[str, Evaluation] = OrderedDict()
        self._lock = threading.Lock()
        self._loads: str | None = None  # why the evaluator does not load ("": it does; None: not probed)

    def __getstate__(self) -> dict[str, Any]:
        return {"task": self.task, "failure_score": self.failure_score, "max_processes": self.max_processes}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_cache()

    def evaluate(self, block: Any) -> Evaluation:
        block = getattr(block, "data", block)
        if not isinstance(block, str):
            return self._fail("error", f"the evolve block must be program text, got {type(block).__name__}")
        program = self.task.program.render(block)
        key = hashlib.sha256(program.encode("utf-8")).hexdigest()
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        evaluation = self._evaluate(program)
        if evaluation.status not in ("timeout", "oom", "crash"):  # may depend on machine load: not cached
            with self._lock:
                self._cache[key] = evaluation
                while len(self._cache) > self.CACHE_SIZE:
                    self._cache.popitem(last=False)
        return evaluation

    def _evaluate(self, program: str) -> Evaluation:
        from trace_bench.sandbox import SandboxLimits, run_sandboxed

        limits = SandboxLimits(wall_s=self.task.timeout_s, memory_mb=self.task.memory_mb, file_size_mb=64,
                               max_processes=self.max_processes)
        result = run_sandboxed(TARGET, self.task.payload(program), limits)
        if not result.ok:
            detail = result.traceback.strip().splitlines()[-12:] if result.traceback else []
            message = f"{result.error_type}: {result.message}" if result.error_type else result.message
            output = f"\nprogram output (tail):\n{result.stdout[-800:]}" if result.stdout.strip() else ""
            failed = self._fail(result.status, message + ("\n" + "\n".join(detail) if detail else "") + output)
            if result.status not in ("timeout", "oom", "crash"):
                failed.task_fault = self._load_fault(limits)
            return failed
        if self.task.form == "split":
            try:
                module = self.task.trusted_module()
            except Exception as exc:  # the task's own code, before any candidate data
                failed = self._fail("error", f"the evaluator does not load in the job: {type(exc).__name__}: {exc}")
                failed.task_fault = f"the task's evaluator does not load in the job: {_described(exc)}"
                return failed
            try:
                value = module.score(result.value, **self.task.settings)
            except Exception as exc:  # the data came from the candidate: anything malformed is its failure
                failed = self._fail("invalid", f"{type(exc).__name__}: {exc}")
                if isinstance(exc, _CODE_ERRORS):  # ...but no data makes a name undefined
                    failed.task_fault = f"the task's score() has a code error: {_described(exc)}"
                return failed
        else:
            value = result.value
        try:
            metrics, notes = metrics_of(value)
        except Exception as exc:
            return self._fail("invalid", f"the evaluator's result is malformed ({type(exc).__name__}: {exc})")
        score = metrics.get("combined_score")
        averaged = average_score(value) if score is None else None
        if averaged is not None:  # the libraries' rule for an evaluator that reports no combined_score
            score, names = averaged
            metrics["combined_score"] = score
            notes.insert(0, f"(no combined_score reported: the average of {', '.join(names)}, as OpenEvolve and "
                            "SkyDiscover score it)")
        if score is None:
            return self._fail("invalid", "the evaluator's result has no finite combined_score", notes)
        return Evaluation(True, score, self._feedback(score, metrics, notes), metrics)

    def _load_fault(self, limits: Any) -> str:
        """Why the task's evaluator does not load in the sandbox ("" when it does, or when the probe
        could not tell): probed once per guide, with no candidate, so no candidate can fake it."""
        with self._lock:
            known = self._loads
        if known is not None:
            return known
        from trace_bench.sandbox import run_sandboxed

        probe = run_sandboxed(TARGET, {**self.task.payload(""), "function": LOAD_ONLY}, limits)
        if probe.ok:
            fault = ""
        elif probe.status in ("timeout", "oom", "crash"):
            return ""  # the machine, maybe: ask again at the next failure
        else:
            trace = "\n".join(probe.traceback.strip().splitlines()[-12:]) if probe.traceback else ""
            fault = f"the task's evaluator does not load: {probe.error_type}: {probe.message}\n{trace}".strip()
        with self._lock:
            self._loads = fault
        return fault

    def _feedback(self, score: float, metrics: Mapping[str, float], notes: list[str]) -> str:
        lines = [f"combined_score = {score:.9g} (higher is better)."]
        best = self.task.best_known
        percent = best.percent(metrics) if best is not None else None
        if best is not None and percent is not None:
            lines.append(f"{best.metric} = {metrics[best.metric]:.9g}: {percent:.3f}% of the best known value "
                         f"{best.value:g} ({best.source or 'declared by the task'}).")
        others = [f"{k} = {v:.6g}" for k, v in metrics.items() if k != "combined_score"]
        if others:
            lines.append("metrics: " + ", ".join(others[:20]))
        lines += notes
        return "\n".join(lines)[:_FEEDBACK_CHARS]

    def _fail(self, status: str, message: str, notes: list[str] | None = None) -> Evaluation:
        text = f"Evaluation failed ({status}): {message}"
        if notes:
            text += "\n" + "\n".join(notes)
        return Evaluation(False, self.failure_score, text[:_FEEDBACK_CHARS], {}, status)

    # -- the Guide protocol ---------------------------------------------------------------
    def get_feedback(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> tuple[float, str]:
        evaluation = self.evaluate(response)
        if evaluation.task_fault:
            raise EvaluatorBroken(f"{self.task.task_id}: {evaluation.task_fault}")
        return evaluation.score, evaluation.feedback

    def metrics_for(self, block: Any) -> dict[str, float]:
        """The evaluator's metrics of a block (from the cache when it was evaluated)."""
        return dict(self.evaluate(block).metrics)

    def report_fields(self, block: Any) -> dict[str, Any]:
        """What a job records about its best block: metrics, % of the best known value, trust."""
        evaluation = self.evaluate(block)
        best = self.task.best_known
        percent = best.percent(evaluation.metrics) if best is not None and evaluation.ok else None
        return {"metrics_best": dict(evaluation.metrics), "score_trust": self.task.trust,
                "best_known": best.as_dict() if best is not None else None,
                "pct_of_best_known": None if percent is None else round(percent, 6)}


def _described(exc: BaseException) -> str:
    """An exception of the task's trusted code with the tail of its traceback (where in the evaluator)."""
    import traceback

    lines = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).strip().splitlines()
    return f"{type(exc).__name__}: {exc}\n" + "\n".join(lines[-12:])

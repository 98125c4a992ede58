"""Turn a static :class:`CodeTask` into a problem: trainable program, sandboxed guide, datasets.

The guide scores a candidate program with the task's trusted evaluator (``CodeTask.evaluator``,
run in the job process), which runs the candidate only through
:func:`trace_bench.sandbox.run_sandboxed` and scores the plain data that comes back: an
LLM-written heuristic can never hang, exhaust memory, spawn processes, touch the network or
files, or change its own score.  Failures score :data:`FAILURE_SCORE` and their feedback starts
with one machine-readable line (``TRACE_FEEDBACK_JSON={"status", "phase", "error"}``) followed
by advice an LLM can act on.  Evaluations are deterministic for a seed, so the guide keeps a
small cache: a trainer that re-scores a candidate, or asks for ``get_score_dict`` after
``get_feedback``, pays once.
"""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import threading
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from trace_bench._util.errors import TraceBenchError
from trace_bench.sandbox import SandboxLimits, SandboxResult, require, run_sandboxed
from trace_bench.tasks.guide import Guide
from trace_bench.tasks.llm4ad.evalkit import CANDIDATE_FILENAME, FAILURE_SCORE, InvalidSolution

TEST_SEED_OFFSET = 1000  # the held-out test split uses seed + this: different instances, same generator
COMMON_DEFAULTS: dict[str, Any] = {"seed": 2024, "n_instances": 8, "timeout_seconds": 20.0, "memory_mb": 1024}
_COMPILE_ERRORS = {"SyntaxError", "IndentationError", "TabError"}
_LOAD_ERRORS = {"MissingEntryError", "CandidateLoadError"}
_ADVICE = {
    "compile": "The program is not valid Python. Fix the syntax error at the line shown; return only code.",
    "load": "The program must define the entry function at top level, and its top level must run without error.",
    "run": "The heuristic raised an exception while solving instances; check the traceback and argument types.",
    "validate": "The heuristic ran but its answer broke a rule of the task.",
    "score": "The evaluation produced a non-finite score; avoid NaN/inf (e.g. division by zero).",
    "timeout": "The evaluation ran out of time; make the function faster (vectorize with numpy, avoid nested loops).",
    "oom": "The evaluation ran out of memory; avoid building large arrays or unbounded caches.",
    "denied": "The sandbox refused an action (files outside the working directory, processes, network); "
              "the heuristic must be a pure computation.",
    "crash": "The evaluation process died (e.g. a segfault in native code); use plain Python and numpy.",
}


Run = Callable[..., Any]  # run(target, payload[, candidate=(target, payload)]) -> the sandbox's plain-data answer


class SandboxFailure(TraceBenchError):
    """A sandboxed call did not return a value (error, timeout, ...); the guide explains it."""

    def __init__(self, result: SandboxResult) -> None:
        super().__init__(result.describe())
        self.result = result


@dataclass(frozen=True)
class CodeTask:
    """Static description of one algorithm-design task (no numpy, no opto).

    ``evaluator`` names the trusted ``evaluate(payload, run) -> dict`` of the task (it runs in the
    job process and reaches the candidate only through ``run``); ``packages`` lists top-level
    packages outside site-packages that the task's sandbox targets import.  ``sandbox_modules``
    names the modules of the targets ``evaluate`` calls (default: the evaluator's own module): the
    sandbox shows those modules and their imports, and nothing else of trace-bench, so a module
    that makes hidden data (the equation tasks' generators) must not be one of them.
    """

    name: str
    entry: str
    signature: str
    description: str
    constraints: str
    template: str
    stub_candidates: tuple[str, ...]
    evaluator: str
    scoring: str
    defaults: Mapping[str, Any] = field(default_factory=dict)
    objectives: tuple[str, ...] = ()
    objective_weights: Mapping[str, float] = field(default_factory=dict)
    minimize: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()
    sandbox_modules: tuple[str, ...] = ()
    candidate_hides: tuple[str, ...] = ()  # packages a candidate's process must not see (its checker's data)
    # (settings, train seed, test seed) -> {"train": score, "test": score, "why": text}: the best score the data
    # allows an honest candidate on each split (the equation tasks' noise floor); the audit flags a score above
    score_bounds: Callable[[Mapping[str, Any], int, int], dict[str, Any]] | None = None

    @property
    def target_modules(self) -> tuple[str, ...]:
        return self.sandbox_modules or (self.evaluator.partition(":")[0],)

    def settings(self, eval_kwargs: Mapping[str, Any]) -> dict[str, Any]:
        """Defaults overridden by ``eval_kwargs`` (numbers coerced to the default's type; unknown keys ignored,
        as the original task modules did)."""
        merged = {**COMMON_DEFAULTS, **self.defaults}
        for key, value in eval_kwargs.items():
            if key not in merged or value is None:
                continue
            kind = type(merged[key])
            if kind in (int, float):
                try:
                    value = kind(value)
                except (TypeError, ValueError):
                    raise ValueError(f"llm4ad:{self.name}: eval_kwargs {key}={value!r} must be {kind.__name__}") from None
            merged[key] = value
        return merged


@dataclass
class Evaluation:
    score: float
    feedback: str
    objectives: dict[str, float]
    status: str


def candidate_traceback(text: str) -> str:
    """Only the frames of the candidate's own code, plus the exception line: what an LLM can fix."""
    lines = text.rstrip().splitlines()
    if not lines:
        return ""
    kept: list[str] = []
    for i, line in enumerate(lines):
        if line.strip().startswith(f'File "{CANDIDATE_FILENAME}"'):
            kept.append(line.strip())
            following = lines[i + 1].strip() if i + 1 < len(lines) else ""
            if following and not following.startswith(("File ", "^", "~")):
                kept.append(f"    {following}")
    if not kept:
        return ""
    return "Traceback (your code):\n  " + "\n  ".join(kept) + f"\n{lines[-1].strip()}"


def _failure_feedback(status: str, phase: str, error: str, detail: str) -> str:
    head = "TRACE_FEEDBACK_JSON=" + json.dumps({"status": status, "phase": phase, "error": error[:300]})
    advice = _ADVICE.get(status if status in ("timeout", "oom", "denied", "crash") else phase, "")
    body = f"Evaluation failed ({status} during {phase}): {error}\n{advice}"
    if detail.strip():
        body += f"\n{detail.strip()[-1500:]}"
    return f"{head}\n{body}"


class HeuristicGuide(Guide):
    """Scores program source text (the trainable parameter's value) in the sandbox."""

    CACHE_SIZE = 64

    def __init__(self, task: CodeTask, settings: Mapping[str, Any]) -> None:
        self.task = task
        self.settings = dict(settings)
        self._init_cache()

    def _init_cache(self) -> None:
        self._cache: OrderedDict[str, Evaluation] = OrderedDict()
        self._lock = threading.Lock()

    def clear_cache(self) -> None:
        """Forget cached evaluations (e.g. to time a real evaluation)."""
        with self._lock:
            self._cache.clear()

    def __getstate__(self) -> dict[str, Any]:
        return {"task": self.task, "settings": self.settings}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__.update(state)
        self._init_cache()

    def payload(self, program: str, info: Any) -> dict[str, Any]:
        info = info if isinstance(info, Mapping) else {}
        payload = {k: v for k, v in self.settings.items() if k not in ("timeout_seconds", "memory_mb")}
        payload.update({k: info[k] for k in ("seed", "n_instances", "train_seed") if k in info})
        payload["program"] = program
        return payload

    def evaluate(self, program: Any, info: Any = None) -> Evaluation:
        if not isinstance(program, str):
            program = getattr(program, "data", program)
        if not isinstance(program, str):
            error = f"the parameter must be program source text, got {type(program).__name__}"
            return self._fail("error", "load", error, "")
        payload = self.payload(program, info)
        key = hashlib.sha256(json.dumps(payload, sort_keys=True, default=str).encode()).hexdigest()
        with self._lock:
            if key in self._cache:
                self._cache.move_to_end(key)
                return self._cache[key]
        evaluation = self._evaluate(payload)
        if evaluation.status in ("timeout", "oom", "crash"):  # may depend on machine load: not cached
            return evaluation
        with self._lock:
            self._cache[key] = evaluation
            while len(self._cache) > self.CACHE_SIZE:
                self._cache.popitem(last=False)
        return evaluation

    def _fail(self, status: str, phase: str, error: str, detail: str) -> Evaluation:
        objectives = {name: -FAILURE_SCORE if name in self.task.minimize else FAILURE_SCORE
                      for name in self.task.objectives}
        return Evaluation(FAILURE_SCORE, _failure_feedback(status, phase, error, detail), objectives, status)

    def _evaluate(self, payload: dict[str, Any]) -> Evaluation:
        limits = SandboxLimits(wall_s=float(self.settings["timeout_seconds"]), memory_mb=int(self.settings["memory_mb"]))

        def run(target: str, call_payload: dict[str, Any], candidate: tuple[str, dict[str, Any]] | None = None) -> Any:
            """One sandboxed call; with ``candidate``, a checker call that reaches the candidate's function,
            which is served from a second sandboxed call (:mod:`trace_bench.sandbox.rpc`)."""
            if candidate is None:
                result = run_sandboxed(target, call_payload, limits, packages=self.task.packages)
            else:
                from trace_bench.sandbox.policy import HIDE_PREFIX
                from trace_bench.sandbox.rpc import run_with_candidate

                hides = tuple(HIDE_PREFIX + name for name in self.task.candidate_hides)
                result, served = run_with_candidate(target, call_payload, candidate[0], candidate[1], limits,
                                                    packages=self.task.packages,
                                                    candidate_packages=(*self.task.packages, *hides))
                if served.status in ("timeout", "oom", "denied") and not result.ok:
                    result = served  # the candidate's own limit or refusal is the better explanation
            if not result.ok:
                raise SandboxFailure(result)
            return result.value

        module_name, _, function = self.task.evaluator.partition(":")
        evaluate = getattr(importlib.import_module(module_name), function)
        try:
            value = evaluate(payload, run)
        except SandboxFailure as failure:
            return self._interpret(failure.result)
        except InvalidSolution as exc:
            return self._fail("invalid", "validate", str(exc), f"Rule: {self.task.constraints}")
        except Exception as exc:  # the sandbox's answer is hostile data: anything malformed is invalid
            return self._fail("invalid", "validate", f"the candidate's output is malformed ({type(exc).__name__}: "
                                                     f"{exc})", f"Rule: {self.task.constraints}")
        return self._score(value)

    def _interpret(self, result: SandboxResult) -> Evaluation:
        """Feedback for a sandboxed call that failed (``result.ok`` is False)."""
        error = f"{result.error_type}: {result.message}" if result.error_type else result.message
        detail = candidate_traceback(result.traceback)
        if result.stdout.strip():
            detail += f"\nprogram output (tail):\n{result.stdout[-500:]}"
        if result.status not in ("error", "denied"):
            return self._fail(result.status, "run", error, detail)
        kind = result.error_type or ""
        if kind == "InvalidSolution":
            return self._fail("invalid", "validate", result.message, f"Rule: {self.task.constraints}")
        phase = "compile" if kind in _COMPILE_ERRORS else "load" if kind in _LOAD_ERRORS else "run"
        return self._fail(result.status, phase, error, detail)

    def _score(self, value: Any) -> Evaluation:
        """Feedback for the trusted evaluator's score dict."""
        value = value if isinstance(value, Mapping) else {}
        objectives = {k: float(v) for k, v in (value.get("objectives") or {}).items()}
        score = self.scalarize(objectives) if self.task.objectives else float(value.get("score", math.nan))
        if not math.isfinite(score) or any(not math.isfinite(v) for v in objectives.values()):
            return self._fail("nonfinite", "score", f"score is {score}", "")
        lines = [f"Score: {score:.6g} (higher is better; {self.task.scoring})."]
        if value.get("summary"):
            lines.append(str(value["summary"]))
        if value.get("worst"):
            lines.append(f"Hint: {value['worst']}.")
        return Evaluation(score, "\n".join(lines), objectives, "ok")

    def scalarize(self, objectives: Mapping[str, float]) -> float:
        """The weighted score, the same number the harness computes from ``objective_config``."""
        total = 0.0
        for name in self.task.objectives:
            sign = -1.0 if name in self.task.minimize else 1.0
            total += sign * float(self.task.objective_weights.get(name, 1.0)) * float(objectives.get(name, math.nan))
        return total

    def get_feedback(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> tuple[float, str]:
        evaluation = self.evaluate(response, reference)
        return evaluation.score, evaluation.feedback

    def get_score_dict(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> dict[str, float]:
        evaluation = self.evaluate(response, reference)
        return dict(evaluation.objectives) if self.task.objectives else {"score": evaluation.score}


def parameter_description(task: CodeTask) -> str:
    return f"The code should start with: def {task.entry}{task.signature}:  {task.constraints}"


def build_problem(task: CodeTask, eval_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The problem mapping of :mod:`trace_bench.tasks.problem` for ``task``."""
    from opto import trace

    settings = task.settings(eval_kwargs)
    require(*task.target_modules)  # a job that cannot sandbox the candidates fails now, with the reason and the fix
    seed, n_instances = int(settings["seed"]), int(settings["n_instances"])
    param = trace.node(task.template, name="__code", trainable=True, description=parameter_description(task))
    info = {"entry": task.entry, "seed": seed, "n_instances": n_instances}
    # a held-out split names the training seed: a task that fits (the equation tasks) fits there, never on it
    test_info = {**info, "seed": seed + TEST_SEED_OFFSET, "train_seed": seed}
    objective = (f"{task.description}\nImprove the Python function `{task.entry}` so the score gets higher "
                 f"(score: {task.scoring}). The code must define `def {task.entry}{task.signature}`; "
                 f"{task.constraints} numpy is available as `np`.")
    problem: dict[str, Any] = {
        "param": param,
        "guide": HeuristicGuide(task, settings),
        "train_dataset": {"inputs": [task.description], "infos": [info]},
        "test_dataset": {"inputs": [task.description], "infos": [test_info]},
        "optimizer_kwargs": {"objective": objective, "memory_size": 10},
        "metadata": {"benchmark": "llm4ad", "task": task.name, "entry": task.entry, "optimizes": "heuristic code",
                     "scoring": task.scoring, "failure_score": FAILURE_SCORE, "seed": seed,
                     "test_seed": test_info["seed"], "n_instances": n_instances},
        "stub_candidates": list(task.stub_candidates),
    }
    if task.score_bounds is not None:
        problem["metadata"]["score_bounds"] = task.score_bounds(settings, seed, seed + TEST_SEED_OFFSET)
    if task.objectives:
        problem["objective_config"] = {"mode": "weighted", "minimize": list(task.minimize),
                                       "weights": {k: float(task.objective_weights.get(k, 1.0)) for k in task.objectives}}
        problem["metadata"]["objectives"] = list(task.objectives)
    return problem

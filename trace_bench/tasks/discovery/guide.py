"""The guide of a discovery task: the evolve block in, a sandboxed evaluation, a score out.

The trainable parameter holds the evolve block; the guide renders the whole program around it,
runs the evaluator in the sandbox (:mod:`.sandboxed`, by its layout's protocol) and, for split
evaluators, scores the plain data that comes back in this process.  The result becomes a score,
metrics and feedback by the peers' own rules (:mod:`.results`).  Anything that goes wrong (the
program does not load, the evaluator raises, the data is malformed, there is nothing to score, the
sandbox refuses or times out) is a failed evaluation: the task's failure score, with feedback that
says what happened.  Evaluations are cached per program (each is seeded the same way, so a
program's score is a function of its text), so re-scoring a candidate costs nothing; an evaluation
that timed out is not cached (it depends on the machine's load).
"""

from __future__ import annotations

import contextlib
import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from trace_bench._util.errors import TraceBenchError
from trace_bench.tasks.discovery import results
from trace_bench.tasks.discovery.sandboxed import LOAD_ONLY
from trace_bench.tasks.discovery.task import DiscoveryTask
from trace_bench.tasks.guide import Guide

TARGET = "trace_bench.tasks.discovery.sandboxed:run_program"
OPENAI_TARGET = "trace_bench.tasks.discovery.sandboxed_openai:run_program"  # openai preloaded in the zygote
_FEEDBACK_CHARS = 3000
_UNCACHED = ("timeout", "oom", "crash")


@dataclass
class Evaluation:
    ok: bool
    score: float
    feedback: str
    metrics: dict[str, float] = field(default_factory=dict)
    status: str = "ok"
    task_fault: str = ""  # set when the task's evaluator, not the candidate, failed: the job ends task_error


class EvaluatorBroken(TraceBenchError, RuntimeError):
    """The task's evaluator failed, whatever the candidate: its module does not load (in the sandbox
    or in the job), or its trusted ``score()`` has a code error (a name or an import it lacks).  Raised
    by :meth:`DiscoveryGuide.get_feedback`, so the job ends ``task_error`` with this message instead
    of scoring every candidate as failed."""


# Exceptions of the trusted score() that no data can cause: the evaluator's own code is wrong.
_CODE_ERRORS = (NameError, ImportError, SyntaxError)


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
        self._llm: Any = None

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
        if evaluation.status not in _UNCACHED:  # may depend on machine load: not cached
            with self._lock:
                self._cache[key] = evaluation
                while len(self._cache) > self.CACHE_SIZE:
                    self._cache.popitem(last=False)
        return evaluation

    def limits(self) -> Any:
        from trace_bench.sandbox import SandboxLimits

        return SandboxLimits(wall_s=self.task.wall_limit_s, memory_mb=self.task.memory_mb, file_size_mb=64,
                             max_processes=self.max_processes, network=self.task.llm)

    @contextlib.contextmanager
    def _call(self, payload: dict[str, Any]) -> Iterator[tuple[dict[str, Any], tuple[int, ...]]]:
        """The payload and channels of one sandboxed call: an evaluator that calls an LLM gets the
        run's gateway (:mod:`.llm_link`), and its config files are pointed at it; a probe that only
        imports the evaluator gets the same settings with a placeholder key and no endpoint."""
        if not self.task.llm:
            yield payload, ()
            return
        if payload.get("function") == LOAD_ONLY:
            yield {**payload, "llm": {"key": "probe", "configs": list(self.task.llm_configs)}}, ()
            return
        from trace_bench.tasks.discovery.llm_link import EvaluatorLLM

        with self._lock:
            if self._llm is None:
                self._llm = EvaluatorLLM()
        link = self._llm
        llm = {"key": link.api_key, "configs": list(self.task.llm_configs)}
        with link.channel() as channel:
            yield {**payload, "llm": llm}, (channel,)

    def _run(self, payload: dict[str, Any]) -> Any:
        from trace_bench.sandbox.runner import start_call

        limits = self.limits()
        try:
            with self._call(payload) as (sent, channels):
                call = start_call(OPENAI_TARGET if self.task.preload_openai else TARGET, sent, limits,
                                  channels=channels)
                return call if not hasattr(call, "finish") else call.finish()
        except RuntimeError as exc:  # no job session for an evaluator that calls an LLM: one clear line
            from trace_bench.sandbox import SandboxResult

            return SandboxResult("error", error_type=type(exc).__name__, message=str(exc))

    def _evaluate(self, program: str) -> Evaluation:
        result = self._run(self.task.payload(program))
        if not result.ok:
            detail = result.traceback.strip().splitlines()[-12:] if result.traceback else []
            message = f"{result.error_type}: {result.message}" if result.error_type else result.message
            tail = results.mask_durations(result.stdout[-800:]) if result.stdout.strip() else ""
            output = f"\nprogram output (tail):\n{tail}" if tail else ""
            failed = self._fail(result.status, message + ("\n" + "\n".join(detail) if detail else "") + output)
            if result.status not in _UNCACHED:
                failed.task_fault = self.load_fault()
            return failed
        value = result.value
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
        try:
            outcome = results.interpret(value, timing_in_feedback=self.task.timing_in_feedback,
                                        features=self.task.feature_dimensions)
        except Exception as exc:
            return self._fail("invalid", f"the evaluator's result is malformed ({type(exc).__name__}: {exc})")
        if outcome.failed or outcome.score is None:
            failed = self._fail(outcome.status, outcome.failed, outcome.notes)
            failed.metrics = outcome.metrics
            return failed
        return Evaluation(True, outcome.score, self._feedback(outcome.score, outcome.metrics, outcome.notes),
                          outcome.metrics, outcome.status)

    def load_fault(self) -> str:
        """Why the task's evaluator does not load in the sandbox ("" when it does, or when the probe
        could not tell): probed once per guide, with no candidate, so no candidate can fake it."""
        with self._lock:
            known = self._loads
        if known is not None:
            return known
        probe = self._run({**self.task.payload(""), "function": LOAD_ONLY})
        if probe.ok:
            fault = ""
        elif probe.status in _UNCACHED:
            return ""  # the machine, maybe: ask again at the next failure
        else:
            from trace_bench.tasks.discovery.requirements import install_hint

            trace = "\n".join(probe.traceback.strip().splitlines()[-12:]) if probe.traceback else ""
            hint = ""
            if probe.error_type in ("ModuleNotFoundError", "ImportError") and "'" in probe.message:
                hint = f" ({install_hint(probe.message.split(chr(39))[1])})"
            fault = f"the task's evaluator does not load: {probe.error_type}: {probe.message}{hint}\n{trace}".strip()
        with self._lock:
            self._loads = fault
        return fault

    def _feedback(self, score: float, metrics: Mapping[str, float], notes: list[str]) -> str:
        lines = [f"combined_score = {score:.9g} (higher is better)."]
        best = self.task.best_known
        percent = best.percent(metrics) if best is not None else None
        if best is not None and percent is not None and self.task.show_target:
            lines.append(f"{best.metric} = {metrics[best.metric]:.9g}: {percent:.3f}% of the best known value "
                         f"{best.value:.12g} ({best.source or 'declared by the task'}).")
        shown = results.shown_metrics(metrics, self.task.timing_in_feedback)
        if shown:
            lines.append("metrics: " + ", ".join(f"{k} = {v:.6g}" for k, v in list(shown.items())[:20]))
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
        """What a job records about its best block: metrics, % of the best known value (and of
        AlphaEvolve's, for the built-in problems), trust."""
        evaluation = self.evaluate(block)
        best = self.task.best_known
        percent = best.percent(evaluation.metrics) if best is not None and evaluation.ok else None
        alphaevolve = best.percent_of_alphaevolve(evaluation.metrics) if best is not None and evaluation.ok else None
        return {"metrics_best": dict(evaluation.metrics), "score_trust": self.task.trust,
                "best_known": best.as_dict() if best is not None else None,
                "pct_of_best_known": None if percent is None else round(percent, 6),
                "pct_of_alphaevolve": None if alphaevolve is None else round(alphaevolve, 6)}


def _described(exc: BaseException) -> str:
    """An exception of the task's trusted code with the tail of its traceback (where in the evaluator)."""
    import traceback

    lines = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)).strip().splitlines()
    return f"{type(exc).__name__}: {exc}\n" + "\n".join(lines[-12:])

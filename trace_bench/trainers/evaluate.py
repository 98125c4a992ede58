"""Rollouts and evaluation: run the agent on examples and score with the guide.

A rollout is (input, info, output node, score, feedback, score dict).  A candidate's failures are
data and never score well: when trainable code raises (``trace.ExecutionError``) or the guide
rejects the output (it raised :class:`~trace_bench.tasks.guide.OutputRejected`), the rollout gets
the task's failure score (:attr:`trace_bench.tasks.problem.Problem.failure_score`), the error text
as feedback so optimizers can learn from it, and ``error=True``.  On a multi-objective task a
failed rollout scores the failure score on every objective (as the worst value, for minimized
ones), so a state that fails on some inputs can never look good on any objective.

A failure of the guide itself is not the candidate's: a guide that raises anything else, or
returns a score that is not a finite number, raises :class:`~trace_bench.tasks.guide.TaskError`
(recorded in the problem's :class:`~trace_bench.tasks.guide.GuideFailures` too, so a trainer or
library that swallows the exception cannot hide it) and the job ends ``task_error``, unless the
task opted in with ``score_guide_errors`` (then it is scored as a failure and counted).  LLM errors
and exceptions that name a job status (infrastructure failures) propagate unchanged.

:func:`summarize` is the one rule that turns a batch of rollouts into (score, score dict, failed),
used by trainers and by the harness's measurements alike.
"""

from __future__ import annotations

import contextvars
import math
import threading
import traceback
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from trace_bench.tasks.guide import GuideFailures, OutputRejected, TaskError, call_guide
from trace_bench.trainers.objectives import ObjectiveConfig, mean_score_dict, scalarize
from trace_bench.trainers.threads import make_opto_thread_safe

_BATCHIFY: Any = None


@dataclass
class Rollout:
    input: Any
    info: Any
    output: Any
    score: float
    feedback: str
    score_dict: dict[str, float] = field(default_factory=dict)
    error: bool = False


@dataclass(frozen=True)
class Summary:
    """A batch of rollouts as one number, per-objective means, and whether any rollout failed."""

    score: float
    score_dict: dict[str, float]
    failed: bool


def _to_float(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return float("nan")
    return number


def _forward(param: Any, x: Any) -> tuple[Any, bool]:
    from opto import trace
    from opto.trace.nodes import Node, ParameterNode

    if isinstance(param, ParameterNode):
        return param, False
    try:
        output = param(x)
    except trace.ExecutionError as exc:
        return exc.exception_node, True
    if not isinstance(output, Node):
        output = trace.node(output)
    return output, False


def _passes_through(exc: Exception) -> bool:
    """Whether a guide's exception ends the job as it is: an LLM failure, memory exhaustion, or an
    exception that names its job status (an infrastructure problem, a task error)."""
    from trace_bench.llm.errors import LLMError
    from trace_bench.store.models import declared_status

    return isinstance(exc, (LLMError, MemoryError)) or declared_status(exc) is not None


class Evaluator:
    """Runs rollouts for one problem; threads parallelize examples within a batch."""

    def __init__(self, param: Any, guide: Any, *, error_score: float = 0.0, num_threads: int = 1,
                 want_score_dict: bool = False, objective: ObjectiveConfig | None = None,
                 score_guide_errors: bool = False, failures: GuideFailures | None = None) -> None:
        self.param = param
        self.guide = guide
        self.error_score = error_score
        self.score_guide_errors = score_guide_errors
        self.failures = failures if failures is not None else GuideFailures()
        self.num_threads = max(1, int(num_threads))
        self.objective = objective
        self.want_score_dict = want_score_dict or bool(objective and objective.multi)
        self.n_evals = 0
        #: the job's budget (``check_evaluations``), consulted before each evaluation; None: unlimited
        self.budget: Any = None
        self._count_lock = threading.Lock()
        self._metrics: tuple[str, ...] = ()
        make_opto_thread_safe()

    def charge(self) -> None:
        """Count one of the trainer's evaluations; past ``budget.evaluations`` raise ``BudgetExhausted``
        instead (before anything runs)."""
        with self._count_lock:
            if self.budget is not None:
                self.budget.check_evaluations(self.n_evals)
            self.n_evals += 1

    def failure_dict(self) -> dict[str, float]:
        """The score dict of a failed rollout: the failure score on every known objective."""
        objective = self.objective
        if objective is None or not objective.multi:
            return {"score": self.error_score}
        metrics = objective.pareto_metrics or tuple(objective.weights) or self._metrics or ("score",)
        return {m: -self.error_score if m in objective.minimize else self.error_score for m in metrics}

    def _failed(self, x: Any, info: Any, output: Any, feedback: str) -> Rollout:
        return Rollout(x, info, output, self.error_score, feedback, self.failure_dict(), True)

    def rollout(self, x: Any, info: Any) -> Rollout:
        self.charge()
        output, error = _forward(self.param, x)
        if error:
            return self._failed(x, info, output, str(output.data))
        return self.score_response(x, output.data, info, output)

    def score_response(self, x: Any, response: Any, info: Any, output: Any = None, *,
                       want_score_dict: bool | None = None) -> Rollout:
        """Score one response with the guide under the module's rule (``output``: the traced node,
        when there is one).  Every path that asks a task's guide for a score goes through here."""
        want = self.want_score_dict if want_score_dict is None else want_score_dict
        output = response if output is None else output
        try:
            score, feedback = call_guide(self.guide, x, response, info)
            score_dict: dict[str, float] = {}
            if isinstance(score, dict):
                score_dict = {k: _to_float(v) for k, v in score.items()}
                score = sum(score_dict.values()) / max(1, len(score_dict))
            elif want and hasattr(self.guide, "get_score_dict"):
                score_dict = {k: _to_float(v) for k, v in self.guide.get_score_dict(x, response, info).items()}
        except OutputRejected as exc:
            return self._failed(x, info, output, f"The output was rejected: {exc}")
        except Exception as exc:
            if _passes_through(exc):
                raise
            message = f"the guide {_guide_name(self.guide)} raised {type(exc).__name__}: {exc}"
            return self._guide_failed(x, info, output, message, traceback.format_exc(), exc)
        number = _to_float(score)
        if not math.isfinite(number) or not all(math.isfinite(v) for v in score_dict.values()):
            shown = score_dict if score_dict and math.isfinite(number) else score
            message = f"the guide {_guide_name(self.guide)} returned a score that is not a finite number: {shown!r}"
            return self._guide_failed(x, info, output, message, "", None, feedback)
        if score_dict and not self._metrics:
            self._metrics = tuple(score_dict)
        return Rollout(x, info, output, number, feedback, score_dict or {"score": number})

    def _guide_failed(self, x: Any, info: Any, output: Any, message: str, trace_text: str,
                      cause: BaseException | None, feedback: str = "") -> Rollout:
        """A failure of the guide: scored as a failed rollout where the task opted in, else a
        :class:`TaskError` that ends the job (recorded first, so it survives being swallowed)."""
        if self.score_guide_errors:
            self.failures.count_scored()
            note = f"(scored as a failure: {message})"
            return self._failed(x, info, output, f"{feedback}\n{note}" if feedback else note)
        error = TaskError(message, trace_text or "".join(traceback.format_stack(limit=12)))
        self.failures.record(error)
        raise error from cause

    def rollouts(self, inputs: Sequence[Any], infos: Sequence[Any]) -> list[Rollout]:
        pairs = list(zip(inputs, infos, strict=True))
        if self.num_threads == 1 or len(pairs) <= 1:
            return [self.rollout(x, info) for x, info in pairs]
        # each rollout runs in a copy of the caller's context, so the LLM phase (train/measure)
        # of the calling thread holds for the calls its rollouts make
        with ThreadPoolExecutor(max_workers=min(self.num_threads, len(pairs))) as pool:
            futures = [pool.submit(contextvars.copy_context().run, self.rollout, x, info) for x, info in pairs]
            return [future.result() for future in futures]


def summarize(rollouts: Sequence[Rollout], objective: ObjectiveConfig | None) -> Summary:
    """The score of a batch: the mean guide score, or on a multi-objective task the scalarized mean
    score dict; plus the per-objective means and whether any rollout failed."""
    score_dict = mean_score_dict(r.score_dict for r in rollouts)
    failed = any(r.error for r in rollouts)
    if objective is not None and objective.multi:
        return Summary(scalarize(score_dict, objective), score_dict, failed)
    return Summary(mean([r.score for r in rollouts]), score_dict, failed)


def make_evaluator(problem: Any, *, num_threads: int = 1) -> Evaluator:
    """The evaluator of a problem: its failure score, objective and guide-failure rule (trainers and
    measurements share the problem's record of guide failures)."""
    return Evaluator(problem.param, problem.guide, error_score=problem.failure_score, num_threads=num_threads,
                     objective=ObjectiveConfig.coerce(problem.objective_config),
                     score_guide_errors=bool(getattr(problem, "score_guide_errors", False)),
                     failures=getattr(problem, "guide_failures", None))


def _guide_name(guide: Any) -> str:
    """A guide's class, or a plain function's own name."""
    if hasattr(guide, "get_feedback"):
        return type(guide).__qualname__
    return str(getattr(guide, "__qualname__", type(guide).__qualname__))


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def batchify(rollouts: Sequence[Rollout]) -> tuple[Any, str]:
    """One traced output node and one feedback text for a minibatch, so one backward carries all.

    Each distinct output node enters the traced concatenation once, and every rollout's feedback
    line is tagged with the ID of its node there.  Rollouts share a node when the trainable
    parameter is itself the output (a code or numeric parameter the guide scores directly): opto's
    backward gives a node one feedback per occurrence in an op's inputs, and its optimizers accept
    only one per child (``GraphPropagator.aggregate`` asserts it), so a repeated node would crash
    the update of any trainer that batches two rollouts of one state."""
    global _BATCHIFY
    ids: dict[int, int] = {}
    nodes: list[Any] = []
    for rollout in rollouts:
        if id(rollout.output) not in ids:
            ids[id(rollout.output)] = len(nodes)
            nodes.append(rollout.output)
    if len(nodes) == 1:
        if len(rollouts) == 1:
            return nodes[0], rollouts[0].feedback
        return nodes[0], "\n".join(f"Example [{i}]: {r.feedback}" for i, r in enumerate(rollouts))
    if _BATCHIFY is None:
        from trace_bench.trainers._batch_op import make_batchify

        _BATCHIFY = make_batchify()
    output = _BATCHIFY(*nodes)
    feedback = "\n".join(f"ID [{ids[id(r.output)]}]: {r.feedback}" for r in rollouts)
    return output, feedback

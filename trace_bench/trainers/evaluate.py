"""Rollouts and evaluation: run the agent on examples and score with the guide.

A rollout is (input, info, output node, score, feedback, score dict).  Execution errors of
trainable code (``trace.ExecutionError``) are data: they become the error node and its message
as feedback, with the task's failure score, so optimizers can learn from them.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

from trace_bench.tasks.guide import call_guide

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


class Evaluator:
    """Runs rollouts for one problem; threads parallelize examples within a batch."""

    def __init__(self, param: Any, guide: Any, *, error_score: float = 0.0, num_threads: int = 1,
                 want_score_dict: bool = False) -> None:
        self.param = param
        self.guide = guide
        self.error_score = error_score
        self.num_threads = max(1, int(num_threads))
        self.want_score_dict = want_score_dict
        self.n_evals = 0

    def rollout(self, x: Any, info: Any) -> Rollout:
        output, error = _forward(self.param, x)
        self.n_evals += 1
        if error:
            return Rollout(x, info, output, self.error_score, str(output.data), {"score": self.error_score}, True)
        response = output.data
        score, feedback = call_guide(self.guide, x, response, info)
        score_dict: dict[str, float] = {}
        if isinstance(score, dict):
            score_dict = {k: _to_float(v) for k, v in score.items()}
            score = sum(score_dict.values()) / max(1, len(score_dict))
        elif self.want_score_dict and hasattr(self.guide, "get_score_dict"):
            score_dict = {k: _to_float(v) for k, v in self.guide.get_score_dict(x, response, info).items()}
        number = _to_float(score)
        if not math.isfinite(number):
            number = self.error_score
        return Rollout(x, info, output, number, feedback, score_dict or {"score": number})

    def rollouts(self, inputs: Sequence[Any], infos: Sequence[Any]) -> list[Rollout]:
        pairs = list(zip(inputs, infos, strict=True))
        if self.num_threads == 1 or len(pairs) <= 1:
            return [self.rollout(x, info) for x, info in pairs]
        with ThreadPoolExecutor(max_workers=min(self.num_threads, len(pairs))) as pool:
            return list(pool.map(lambda pair: self.rollout(*pair), pairs))


def mean(values: Sequence[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def batchify(rollouts: Sequence[Rollout]) -> tuple[Any, str]:
    """One traced output node and one feedback text for a minibatch, so one backward carries all."""
    global _BATCHIFY
    if len(rollouts) == 1:
        return rollouts[0].output, rollouts[0].feedback
    if _BATCHIFY is None:
        from trace_bench.trainers._batch_op import make_batchify

        _BATCHIFY = make_batchify()
    output = _BATCHIFY(*[r.output for r in rollouts])
    feedback = "\n".join(f"ID [{i}]: {r.feedback}" for i, r in enumerate(rollouts))
    return output, feedback

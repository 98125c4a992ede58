"""What the non-LLM baselines share: how many candidates to try, and trying one.

A baseline's ``samples`` (``starts``) knob bounds it; unset, it runs until the job's budget stops it
when the budget can (``evaluations`` or ``wall_s``; LLM limits never bind a trainer that calls no
LLM), else :data:`DEFAULT_CANDIDATES`.  Each candidate is scored on the training split through the
job's evaluator (the sandbox, ``budget.evaluations``) and reported as one step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import Field

from trace_bench.trainers.base import TrainerParams
from trace_bench.trainers.baselines.space import Dimension, build_space
from trace_bench.trainers.context import TrainerContext
from trace_bench.trainers.state import State

DEFAULT_CANDIDATES = 20


class BaselineParams(TrainerParams):
    samples: int | None = Field(default=None, ge=1, description="candidates to evaluate; unset: until the "
                                "job's evaluations or wall_s budget is spent, else 20")


def candidate_limit(ctx: TrainerContext, wanted: int | None) -> int | None:
    """``wanted``, else None (unbounded) when the budget can stop the trainer, else the default."""
    if wanted is not None:
        return wanted
    budget = getattr(ctx.session, "budget", None)
    if budget is not None and (budget.limits.evaluations is not None or budget.limits.wall_s is not None):
        return None
    return DEFAULT_CANDIDATES


@dataclass
class Best:
    score: float | None = None
    state: State | None = None


def try_candidate(ctx: TrainerContext, state: State, best: Best, **info: Any) -> float:
    """Score ``state`` on the training split, report it as a step (accepted when it improves), return
    its score."""
    result = ctx.evaluate(state, ctx.problem.train_dataset)
    improved = best.score is None or result.score > best.score
    if improved:
        best.score, best.state = result.score, state
    ctx.report_step(state, result.score, result.score_dict, accepted=improved, **info)
    return result.score


def task_space(ctx: TrainerContext, scale: float) -> list[Dimension]:
    """The job's numeric space: the task's declared ``search_space`` (problem or metadata), else the
    initial state's numbers (parameters named as the task names them: ``x`` for ``x:0``)."""
    declared = ctx.problem.extras.get("search_space") or ctx.problem.metadata.get("search_space")
    names = [str(getattr(p, "name", "") or f"p{i}").split(":")[0] for i, p in enumerate(ctx.parameters)]
    return build_space(ctx.current_state(), names, scale=scale, declared=declared)

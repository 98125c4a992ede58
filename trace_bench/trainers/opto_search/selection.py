"""Objective-aware ranking shared by every search trainer.

Each trainer ranks candidates by one rule: the mean score when the task is single-objective, the
weighted scalarization of the mean score dict in ``weighted`` mode, and Pareto fronts (front 0
first, each front ordered by ``objective.tie_break``, see :mod:`trace_bench.trainers.objectives`)
in ``pareto`` mode.  Keeping the rule here means
PrioritySearch, GEPA, Beam, UCB and BasicSearch cannot drift apart on multi-objective tasks.
"""

from __future__ import annotations

import math
import random
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from trace_bench.trainers.evaluate import Rollout
from trace_bench.trainers.objectives import ObjectiveConfig, front_order, scalarize

T = TypeVar("T")
Stats = tuple[float, Mapping[str, float]]
"""(mean scalar score, mean score dict) of one candidate."""


def rollout_value(rollout: Rollout, objective: ObjectiveConfig | None) -> float:
    """One number per rollout: the guide's score, or the scalarized score dict when multi-objective."""
    if objective is not None and objective.multi and rollout.score_dict:
        return scalarize(rollout.score_dict, objective)
    return rollout.score


def stats_value(stats: Stats, objective: ObjectiveConfig | None) -> float:
    """The scalar a candidate is ranked by outside Pareto fronts (and the Pareto tie-break)."""
    score, score_dict = stats
    if objective is not None and objective.multi and score_dict:
        return scalarize(score_dict, objective)
    return score if score is not None and not math.isnan(score) else -math.inf


def _pareto_order(indices: list[int], stats: Sequence[Stats], objective: ObjectiveConfig) -> list[int]:
    """Indices by repeated Pareto fronts; within a front by the configured tie-break."""
    remaining = list(indices)
    order: list[int] = []
    while remaining:
        front = [remaining[j] for j in front_order([stats[i][1] for i in remaining], objective)] or list(remaining)
        order.extend(front)
        chosen = set(front)
        remaining = [i for i in remaining if i not in chosen]
    return order


def rank(items: Sequence[T], stats_of: Callable[[T], Stats], objective: ObjectiveConfig | None) -> list[T]:
    """``items`` best first.  Sorting is stable, so ties keep the caller's order (earlier wins)."""
    stats = [stats_of(item) for item in items]
    indices = list(range(len(items)))
    if objective is not None and objective.mode == "pareto":
        return [items[i] for i in _pareto_order(indices, stats, objective)]
    indices.sort(key=lambda i: stats_value(stats[i], objective), reverse=True)
    return [items[i] for i in indices]


def top_k(items: Sequence[T], k: int, stats_of: Callable[[T], Stats],
          objective: ObjectiveConfig | None) -> list[T]:
    return rank(items, stats_of, objective)[: max(0, k)]


def best(items: Sequence[T], stats_of: Callable[[T], Stats], objective: ObjectiveConfig | None) -> T:
    if not items:
        raise ValueError("no candidates to select from")
    return rank(items, stats_of, objective)[0]


def softmax_sample(rng: random.Random, weights: Sequence[float], k: int,
                   temperature: float = 1.0) -> list[int]:
    """``k`` distinct indices drawn by softmax over ``weights`` (higher is likelier), without replacement.

    An infinite weight (an unevaluated candidate) dominates every finite one; among several, the
    draw is uniform.
    """
    remaining = list(range(len(weights)))
    chosen: list[int] = []
    temperature = max(float(temperature), 1e-12)
    while remaining and len(chosen) < k:
        values = [weights[i] for i in remaining]
        top = [i for i, v in zip(remaining, values, strict=True) if v == math.inf]
        finite = [v for v in values if math.isfinite(v)]
        if top:
            pick = rng.choice(top)
        elif not finite:
            pick = rng.choice(remaining)
        else:
            peak = max(finite)
            probs = [math.exp((v - peak) / temperature) if math.isfinite(v) else 0.0 for v in values]
            pick = rng.choices(remaining, weights=probs, k=1)[0]
        chosen.append(pick)
        remaining.remove(pick)
    return chosen


def sample_batch(rng: random.Random, dataset: Mapping[str, list[Any]],
                 size: int) -> tuple[list[Any], list[Any]]:
    """A random subset of ``size`` examples without replacement (all of them when the set is smaller)."""
    n = len(dataset["inputs"])
    picked = rng.sample(range(n), min(max(1, size), n)) if n else []
    return [dataset["inputs"][i] for i in picked], [dataset["infos"][i] for i in picked]

"""Multi-objective selection: weighted scalarization and Pareto fronts over score dicts.

Tasks give a score dict per example (``guide.get_score_dict``) and an ``objective_config``
(:class:`~trace_bench.tasks.objectives.ObjectiveConfig`, re-exported here, or a plain dict).  Trainers
select candidates through :func:`scalarize` and :func:`pareto_front`, so every trainer treats
objectives the same way.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from trace_bench.tasks.objectives import ObjectiveConfig

__all__ = ["ObjectiveConfig", "dominates", "mean_score_dict", "oriented", "pareto_front", "scalarize"]


def oriented(score_dict: Mapping[str, float], config: ObjectiveConfig) -> dict[str, float]:
    """Score dict with minimized metrics negated, so higher is better for every metric."""
    out: dict[str, float] = {}
    for key, value in score_dict.items():
        v = float(value) if value is not None and math.isfinite(float(value)) else config.missing_value
        out[key] = -v if key in config.minimize else v
    return out


def scalarize(score_dict: Mapping[str, float], config: ObjectiveConfig | None) -> float:
    """One number to rank by: the weighted sum of oriented metrics (equal weights by default)."""
    if not score_dict:
        return float("-inf")
    if config is None or config.mode == "scalar":
        key = config.score_key if config else "score"
        if key in score_dict:
            return float(score_dict[key])
        return sum(float(v) for v in score_dict.values()) / len(score_dict)
    values = oriented(score_dict, config)
    weights = config.weights or {k: 1.0 for k in values}
    total = 0.0
    for key, weight in weights.items():
        total += weight * values.get(key, config.missing_value)
    return total


def mean_score_dict(dicts: Iterable[Mapping[str, float]]) -> dict[str, float]:
    sums: dict[str, float] = {}
    counts: dict[str, int] = {}
    for d in dicts:
        for key, value in d.items():
            sums[key] = sums.get(key, 0.0) + float(value)
            counts[key] = counts.get(key, 0) + 1
    return {k: sums[k] / counts[k] for k in sums}


def dominates(a: Mapping[str, float], b: Mapping[str, float], metrics: Sequence[str]) -> bool:
    at_least = all(a.get(m, -math.inf) >= b.get(m, -math.inf) for m in metrics)
    strictly = any(a.get(m, -math.inf) > b.get(m, -math.inf) for m in metrics)
    return at_least and strictly


def pareto_front(points: Sequence[Mapping[str, float]], config: ObjectiveConfig) -> list[int]:
    """Indices of the non-dominated points (after orienting minimized metrics)."""
    oriented_points = [oriented(p, config) for p in points]
    metrics = list(config.pareto_metrics or sorted({k for p in oriented_points for k in p}))
    return [
        i for i, p in enumerate(oriented_points)
        if not any(dominates(q, p, metrics) for j, q in enumerate(oriented_points) if j != i)
    ]

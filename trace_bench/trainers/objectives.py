"""Multi-objective selection: weighted scalarization and Pareto fronts over score dicts.

Tasks give a score dict per example (``guide.get_score_dict``) and an ``objective_config``
(:class:`~trace_bench.tasks.objectives.ObjectiveConfig`, re-exported here, or a plain dict).  Trainers
select candidates through :func:`scalarize`, :func:`pareto_front` and :func:`front_order`, and
the job picks its best state the same way (``BestSoFar`` of :mod:`trace_bench.runner.job.recorder`),
so every trainer treats objectives alike.

Modes: ``scalar`` ranks by the guide's score; ``weighted`` by the weighted sum of the mean score
dict (minimized metrics negated); ``pareto`` keeps the non-dominated set and picks from it by
``tie_break``.  The default, ``closest_to_ideal``, normalizes every metric to [0, 1] over the front
(1 = the front's best value) and picks the member nearest the ideal point (1, ..., 1) in weighted
Euclidean distance: a balanced trade-off that does not depend on the metrics' scales, unlike the
weighted sum.  ``weighted`` picks the front member with the best weighted sum (which is always the
weighted mode's pick), ``lexicographic`` compares metrics in ``pareto_metrics`` order and
``random_seeded`` draws one with ``seed``.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence

from trace_bench.tasks.objectives import TIE_BREAKS, ObjectiveConfig

__all__ = ["TIE_BREAKS", "ObjectiveConfig", "dominates", "front_order", "mean_score_dict", "objective_names", "oriented",
           "pareto_front", "scalarize"]


def objective_names(score_dict: Mapping[str, float]) -> list[str]:
    """The per-objective metrics of a score dict (``score`` alone means single-objective)."""
    return sorted(k for k in score_dict if k != "score")


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


def metrics_of(points: Sequence[Mapping[str, float]], config: ObjectiveConfig) -> list[str]:
    """The metrics a Pareto comparison uses: ``pareto_metrics``, else every metric seen."""
    return list(config.pareto_metrics or sorted({k for p in points for k in p}))


def ideal_distances(points: Sequence[Mapping[str, float]], config: ObjectiveConfig) -> list[float]:
    """Each point's weighted distance to the ideal point of ``points`` after normalizing every
    (oriented) metric to [0, 1] over ``points``; a metric on which all points agree counts 0."""
    oriented_points = [oriented(p, config) for p in points]
    metrics = metrics_of(oriented_points, config)
    distances = [0.0] * len(points)
    for metric in metrics:
        values = [p.get(metric, config.missing_value) for p in oriented_points]
        finite = [v for v in values if math.isfinite(v)]
        low, high = (min(finite), max(finite)) if finite else (0.0, 0.0)
        weight = float(config.weights.get(metric, 1.0)) if config.weights else 1.0
        for i, value in enumerate(values):
            gap = 1.0 if not math.isfinite(value) else ((high - value) / (high - low) if high > low else 0.0)
            distances[i] += weight * gap * gap
    return [math.sqrt(d) for d in distances]


def front_order(points: Sequence[Mapping[str, float]], config: ObjectiveConfig) -> list[int]:
    """Indices of the non-dominated ``points``, best first by the configured ``tie_break``; equal
    keys keep the given order (earlier first).  ``random_seeded`` shuffles with ``config.seed``."""
    import random

    front = pareto_front(points, config)
    if config.tie_break == "random_seeded":
        random.Random(config.seed).shuffle(front)
        return front
    weighted = {i: scalarize(points[i], config) for i in front}
    if config.tie_break == "closest_to_ideal":
        distance = dict(zip(front, ideal_distances([points[i] for i in front], config), strict=True))
        return sorted(front, key=lambda i: (distance[i], -weighted[i]))
    if config.tie_break == "lexicographic":
        metrics = metrics_of([oriented(points[i], config) for i in front], config)
        values = {i: oriented(points[i], config) for i in front}
        return sorted(front, key=lambda i: tuple(-values[i].get(m, config.missing_value) for m in metrics))
    return sorted(front, key=lambda i: -weighted[i])

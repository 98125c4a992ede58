"""llm4ad:knapsack_construct: a constructive heuristic for the 0/1 knapsack problem.

Instances: ``n_items`` items with weights and values uniform in (0, 1) and a capacity of a
quarter of the total weight (seeded).  At each step ``select_next_item`` sees the items that
still fit and picks one (by its index in those arrays) or -1 to stop.  Score = mean packed value.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trace_bench.tasks.llm4ad.evalkit import InvalidSolution, as_int, constructive, dims, rng
from trace_bench.tasks.llm4ad.problem import CodeTask, build_problem

TEMPLATE = '''import numpy as np


def select_next_item(remaining_capacity, weights, values):
    """Take the most valuable item that still fits."""
    return int(np.argmax(values))
'''

RATIO = '''import numpy as np


def select_next_item(remaining_capacity, weights, values):
    """Take the item with the best value per unit of weight."""
    return int(np.argmax(values / np.maximum(weights, 1e-12)))
'''

DP_PLAN = '''import numpy as np

_chosen = []


def _solve(capacity, weights, values, scale=20000):
    """Exact 0/1 knapsack on weights rounded up to 1/scale of the capacity (dynamic programming)."""
    w = np.ceil(weights / capacity * scale).astype(int)
    best = np.zeros(scale + 1)
    keep = np.zeros((len(w), scale + 1), dtype=bool)
    for i in range(len(w)):
        if w[i] > scale:
            continue
        candidate = best[:scale + 1 - w[i]] + values[i]
        better = candidate > best[w[i]:]
        keep[i, w[i]:] = better
        best[w[i]:] = np.where(better, candidate, best[w[i]:])
    chosen, c = [], scale
    for i in range(len(w) - 1, -1, -1):
        if keep[i, c]:
            chosen.append(i)
            c -= w[i]
    return chosen


def select_next_item(remaining_capacity, weights, values):
    """Solve the whole instance once by DP, then hand out the planned items one by one."""
    global _chosen
    pairs = {(float(a), float(b)): i for i, (a, b) in enumerate(zip(weights, values))}
    planned = [p for p in _chosen if p in pairs]
    if not planned:
        picks = _solve(remaining_capacity, weights, values)
        _chosen = [(float(weights[i]), float(values[i])) for i in picks]
        planned = [p for p in _chosen if p in pairs]
    if planned:
        _chosen.remove(planned[0])
        return pairs[planned[0]]
    return int(np.argmax(values / np.maximum(weights, 1e-12)))
'''

TASK = CodeTask(
    name="knapsack_construct",
    entry="select_next_item",
    signature="(remaining_capacity: float, weights: np.ndarray, values: np.ndarray) -> int",
    description=("0/1 knapsack, constructive: items have a weight and a value; the knapsack has a capacity. "
                 "At each step select_next_item is given the remaining capacity and the weights and values "
                 "of the items that are not packed yet and still fit, and picks one to pack (or -1 to stop). "
                 "Maximize the total packed value on random instances."),
    constraints="Return an index into weights/values (0 <= index < len(weights)), or -1 to stop packing.",
    template=TEMPLATE,
    stub_candidates=(RATIO, DP_PLAN),
    evaluator=f"{__name__}:evaluate",
    scoring="mean total packed value",
    defaults={"n_instances": 8, "n_items": 100},
)


def instances(seed: int, n_instances: int, n_items: int) -> list[tuple[np.ndarray, np.ndarray, float]]:
    gen = rng(seed, 3)
    out = []
    for _ in range(n_instances):
        weights, values = gen.uniform(0.01, 1.0, n_items), gen.uniform(0.01, 1.0, n_items)
        out.append((weights, values, float(weights.sum() / 4)))
    return out


def packed_value(select: Any, weights: np.ndarray, values: np.ndarray, capacity: float) -> float:
    remaining = np.arange(len(weights))
    rest, total = capacity, 0.0
    while True:
        fits = remaining[weights[remaining] <= rest + 1e-12]
        if not len(fits):
            return total
        k = as_int(select(rest, weights[fits].copy(), values[fits].copy()), "select_next_item's return value")
        if k == -1:
            return total
        if not 0 <= k < len(fits):
            raise InvalidSolution(f"select_next_item returned {k}, but only {len(fits)} items fit")
        item = fits[k]
        rest -= weights[item]
        total += values[item]
        remaining = remaining[remaining != item]


def _data(payload: dict[str, Any]) -> list[tuple[np.ndarray, np.ndarray, float]]:
    return instances(*dims(payload, "n_items"))


solve, evaluate = constructive(
    TASK, _data, lambda select, instance: packed_value(select, *instance), label="packed value",
    higher_is_better=True, summary=lambda mean, totals, _, payload: (
        f"Mean packed value {mean:.4f} over {len(totals)} instances of {payload['n_items']} items "
        "(higher is better)."))


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    return build_problem(TASK, eval_kwargs)

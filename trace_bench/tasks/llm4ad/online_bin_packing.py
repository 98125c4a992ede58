"""llm4ad:online_bin_packing: a priority function for online bin packing (FunSearch-style).

Instances: ``n_instances`` sequences of ``n_items`` integer item sizes drawn from a Weibull(3)
distribution scaled by 45 and clipped to [1, capacity=100] (seeded).  Items arrive one at a
time; ``priority(item, bins)`` scores every bin the item fits in (``bins`` holds their remaining
capacities, unused bins included) and the item goes to the highest-priority bin.
Score = -mean number of bins used.  Sized to evaluate in well under a second.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from trace_bench.tasks.llm4ad.evalkit import InvalidSolution, as_int, constructive, dims, rng
from trace_bench.tasks.llm4ad.problem import CodeTask, build_problem

CAPACITY = 100.0

TEMPLATE = '''import numpy as np


def priority(item, bins):
    """First fit: prefer the bin that was opened first."""
    return -np.arange(len(bins), dtype=float)
'''

BEST_FIT = '''import numpy as np


def priority(item, bins):
    """Best fit: prefer the bin that the item fills most tightly."""
    return -(bins - item)
'''

GAP_AWARE = '''import numpy as np


def priority(item, bins):
    """Best fit, but avoid leaving an opened bin with a gap too small for a typical future item."""
    gap = bins - item
    score = -gap.astype(float)
    awkward = (bins < bins.max()) & (gap > 2) & (gap < 20)
    score[awkward] -= 30.0
    return score
'''

TASK = CodeTask(
    name="online_bin_packing",
    entry="priority",
    signature="(item: float, bins: np.ndarray) -> np.ndarray",
    description=("Online bin packing: items arrive one at a time and must be placed immediately into a bin of "
                 "capacity 100. For each item, priority(item, bins) returns one priority per bin that can "
                 "hold it (bins holds their remaining capacities; unused bins have capacity 100) and the item "
                 "goes to the bin with the highest priority. Minimize the number of bins used on item "
                 "sequences drawn from a Weibull distribution."),
    constraints="Return a numpy array of len(bins) finite priorities.",
    template=TEMPLATE,
    stub_candidates=(BEST_FIT, GAP_AWARE),
    evaluator=f"{__name__}:evaluate",
    scoring="-mean number of bins used",
    defaults={"n_instances": 5, "n_items": 500},
)


def instances(seed: int, n_instances: int, n_items: int) -> list[np.ndarray]:
    gen = rng(seed, 4)
    return [np.clip(np.ceil(gen.weibull(3.0, n_items) * 45.0), 1, CAPACITY) for _ in range(n_instances)]


def by_priority(priority: Callable[[float, np.ndarray], Any]) -> Callable[[float, np.ndarray], int]:
    """The candidate's rule as a choice: the position of the highest-priority bin among those that fit."""

    def choose(item: float, bins: np.ndarray) -> int:
        scores = np.asarray(priority(item, bins), dtype=float).reshape(-1)
        if scores.shape != bins.shape:
            raise InvalidSolution(f"priority returned {scores.size} values for {bins.size} bins")
        if not np.all(np.isfinite(scores)):
            raise InvalidSolution("priority returned a non-finite value")
        return int(np.argmax(scores))

    return choose


def pack(choose: Callable[[float, np.ndarray], Any], items: np.ndarray) -> int:
    """Place every item in the bin ``choose(item, capacities of the bins it fits)`` picks; returns bins used."""
    bins = np.full(len(items), CAPACITY)
    for item in items:
        fits = np.flatnonzero(bins - item >= 0)
        k = as_int(choose(float(item), bins[fits].copy()), "the chosen bin")
        if not 0 <= k < len(fits):
            raise InvalidSolution(f"bin choice {k} is not one of the {len(fits)} bins the item fits in")
        bins[fits[k]] -= item
    return int((bins != CAPACITY).sum())


def lower_bound(items: np.ndarray) -> int:
    return int(np.ceil(items.sum() / CAPACITY))


def sequences_for(payload: dict[str, Any]) -> list[np.ndarray]:
    return instances(*dims(payload, "n_items"))


def _summary(mean: float, used: list[Any], sequences: Sequence[Any], payload: dict[str, Any]) -> str:
    excess = 100.0 * float(np.mean([u / lower_bound(s) - 1 for u, s in zip(used, sequences, strict=True)]))
    return (f"Mean bins used {mean:.2f} over {len(used)} sequences of {payload['n_items']} items; "
            f"{excess:.2f}% above the volume lower bound (lower is better).")


solve, evaluate = constructive(TASK, sequences_for, pack, label="bins used", higher_is_better=False, fmt=".0f",
                               summary=_summary, wrap=by_priority)


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    return build_problem(TASK, eval_kwargs)

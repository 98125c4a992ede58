"""Erdős' minimum overlap problem through Haugland's step-function form (AlphaEvolve Appendix B.5).

The program's ``overlap_steps()`` returns the values ``h_1..h_k`` in [0, 1] of a step function on
[0, 2] with equal steps and integral 1, that is ``sum(h) = k / 2``.  The value
``max_s 2/k sum_i h_i (1 - h_{i+s})`` (the largest overlap over shifts) is an upper bound on the
constant C5; smaller is better.  The sum must equal ``k / 2`` up to the registry's tolerance (1e-9)
times ``k``.
A value that beats the best known one is bounded rigorously: the overlap's sums add non-negative
products (rounding error at most Higham's gamma of their length), and moving the sum to exactly
``k / 2`` (by ``e``, the sum's exact distance from it, at most ``tolerance * k``) changes the overlap
by at most ``4 e / k``; that bound is what scores.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from trace_bench.tasks.discovery.problems.common import (
    UNIT_ROUNDOFF,
    InvalidConstruction,
    as_array,
    entry,
    load_program,
    result,
    rounding_bound,
)

ENTRY = "overlap_steps"
MAX_STEPS = 10_000

_HEADER = '''"""Erdos minimum overlap: a step function h on [0, 2] with values in [0, 1] and integral 1 whose largest
overlap max_s 2/k sum_i h_i (1 - h_(i+s)) is as small as possible.

overlap_steps() returns the k step values (each in [0, 1], summing to k / 2).
"""
import numpy as np

'''

_START = '''def overlap_steps():
    """Half of the steps at 1, the other half at 0."""
    return np.array([1.0] * 10 + [0.0] * 10)
'''

_SMOOTH = '''def overlap_steps():
    """A smooth bump, then pairwise moves of mass that keep the integral and lower the overlap."""
    rng = np.random.default_rng(4)
    k = STEPS
    x = np.linspace(-1, 1, k)
    h = np.clip(0.5 + 0.6 * np.cos(np.pi * x / 2) - 0.1, 0, 1)
    h *= (k / 2) / h.sum()
    h = np.clip(h, 0, 1)
    h += (k / 2 - h.sum()) / k

    def overlap(h):
        return np.correlate(h, 1 - h, mode="full").max() * 2 / len(h)

    best = overlap(h)
    for _ in range(ITERATIONS):
        i, j = rng.integers(k, size=2)
        delta = rng.normal(0, 0.05)
        trial = h.copy()
        trial[i] += delta
        trial[j] -= delta
        if 0 <= trial[i] <= 1 and 0 <= trial[j] <= 1:
            value = overlap(trial)
            if value < best:
                h, best = trial, value
    return h
'''

STUB_CANDIDATES = tuple(f"STEPS, ITERATIONS = {steps}, {iterations}\n\n\n{_SMOOTH}"
                        for steps, iterations in ((40, 300), (60, 3000)))


def program(**_: Any) -> str:
    return f"{_HEADER}# EVOLVE-BLOCK-START\n{_START}# EVOLVE-BLOCK-END\n"


def run(program_path: str, **_: Any) -> Any:
    return np.asarray(entry(load_program(program_path), ENTRY)(), dtype=float)


def overlap(h: np.ndarray) -> float:
    return float(np.correlate(h, 1 - h, mode="full").max() * 2 / len(h))


def upper_bound(h: np.ndarray) -> Fraction:
    """A rigorous upper bound on the overlap of a step function with exactly the integral 1 near ``h``."""
    k = len(h)
    error = Fraction(rounding_bound(k)) + 2 * Fraction(UNIT_ROUNDOFF)  # 1 - h rounds once where h < 1/2
    largest = (Fraction(float(np.correlate(h, 1 - h, mode="full").max())) + k * Fraction(2) ** -1074) / (1 - error)
    distance = abs(sum((Fraction(float(v)) for v in h), Fraction(0)) - Fraction(k, 2))
    return 2 * largest / k + 4 * distance / k


def score(data: Any, best_known: float, direction: str = "min", tolerance: float = 0.0, margin: float = 0.0,
          **_: Any) -> dict[str, Any]:
    """Trusted side (``tolerance``: how far the sum of the k values may be from k / 2, per value)."""
    h = as_array(data, (None,), "overlap_steps()")
    k = len(h)
    if not 2 <= k <= MAX_STEPS:
        raise InvalidConstruction(f"overlap_steps() must return 2 to {MAX_STEPS} values, got {k}")
    if np.any(h < 0) or np.any(h > 1):
        raise InvalidConstruction("every step value must lie in [0, 1]")
    if abs(h.sum() - k / 2) > tolerance * k:
        raise InvalidConstruction(f"the values must sum to k / 2 = {k / 2:g} (integral 1); they sum to {h.sum():.12g}")
    return result(overlap(h), best_known, direction, f"A step function with {k} steps.", exact=lambda: upper_bound(h),
                  margin=margin, steps=float(k))

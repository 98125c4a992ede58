"""Autocorrelation inequalities for step functions on [-1/4, 1/4] with equally wide steps
(AlphaEvolve Appendix B.1 and B.2).  The program's ``step_heights()`` returns the heights, all
non-negative, at least one positive.

- ``first``: the value ``2 k max(h * h) / (sum h)^2`` (``k`` steps, ``*`` the discrete
  autoconvolution) is an upper bound on the constant C1; smaller is better.
- ``second``: with ``g = h * h`` read as the piecewise-linear function through its values (zero
  at both ends, equally spaced on [-1/2, 1/2]), the value ``||g||_2^2 / (||g||_1 ||g||_inf)`` is a
  lower bound on C2; larger is better.

Both values do not depend on the heights' scale, so the heights are divided by the largest before
anything is computed (heights whose products underflow read 219,396 % of the best known value
before).  A value that beats the best known one is bounded rigorously: every sum here adds
non-negative products, so its rounding error is at most Higham's gamma of its length times the sum
(:func:`~.common.rounding_bound`), and products that underflow lose at most the smallest subnormal
each; the bound, not the float, is what scores.
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

ENTRY = "step_heights"
MAX_STEPS = 10_000
_UNDERFLOW = Fraction(2) ** -1074  # the most a product that underflows loses

_HEADER = '''"""{statement}

step_heights() returns the non-negative heights of a step function on [-1/4, 1/4] with equal steps
(at most {max_steps} of them).
"""
import numpy as np

'''
_STATEMENTS = {
    "first": "First autocorrelation inequality: find a step function whose autoconvolution has the smallest "
             "possible peak, 2 k max(h*h) / (sum h)^2.",
    "second": "Second autocorrelation inequality: find a step function f whose autoconvolution g = f*f makes "
              "||g||_2^2 / (||g||_1 ||g||_inf) as large as possible.",
}

_START = '''def step_heights():
    """A constant function on 20 steps."""
    return np.ones(20)
'''

_SHAPED = '''def step_heights():
    """A profile peaked at both ends, then refined by coordinate moves that improve the value."""
    rng = np.random.default_rng(3)
    k = STEPS
    x = np.linspace(-1, 1, k)
    h = 1.0 / np.sqrt(np.maximum(1.02 - x ** 2, 0.02))

    def value(h):
        g = np.convolve(h, h)
        if KIND == "first":
            return -2 * len(h) * g.max() / h.sum() ** 2
        y = np.concatenate([[0.0], g, [0.0]])
        width = 1.0 / (len(g) + 1)
        l2 = (width / 3 * (y[:-1] ** 2 + y[:-1] * y[1:] + y[1:] ** 2)).sum()
        return l2 / (g.sum() / (len(g) + 1) * g.max())

    best = value(h)
    for step in range(ITERATIONS):
        trial = h.copy()
        i = rng.integers(k)
        trial[i] = max(0.0, trial[i] * np.exp(rng.normal(0, 0.3)))
        trial_value = value(trial)
        if trial_value > best:
            h, best = trial, trial_value
    return h
'''

STUB_CANDIDATES: dict[str, tuple[str, ...]] = {
    kind: tuple(f'KIND = "{kind}"\nSTEPS, ITERATIONS = {steps}, {iterations}\n\n\n{_SHAPED}'
                for steps, iterations in ((30, 200), (50, 2000)))
    for kind in ("first", "second")
}


def program(kind: str, **_: Any) -> str:
    header = _HEADER.format(statement=_STATEMENTS[kind], max_steps=MAX_STEPS)
    return f"{header}# EVOLVE-BLOCK-START\n{_START}# EVOLVE-BLOCK-END\n"


def run(program_path: str, **_: Any) -> Any:
    return np.asarray(entry(load_program(program_path), ENTRY)(), dtype=float)


def heights(data: Any) -> np.ndarray:
    """The heights, checked, divided by the largest (the values do not depend on scale)."""
    h = as_array(data, (None,), "step_heights()")
    if not 1 <= len(h) <= MAX_STEPS:
        raise InvalidConstruction(f"step_heights() must return 1 to {MAX_STEPS} heights, got {len(h)}")
    if np.any(h < 0):
        raise InvalidConstruction(f"height {int(np.argmin(h))} is negative ({h.min():.3g}); f must be non-negative")
    if h.sum() <= 0:
        raise InvalidConstruction("every height is zero")
    return h / h.max()


def first_value(h: np.ndarray) -> float:
    return float(2 * len(h) * np.convolve(h, h).max() / h.sum() ** 2)


def second_value(h: np.ndarray) -> float:
    g = np.convolve(h, h)
    y = np.concatenate([[0.0], g, [0.0]])
    width = 1.0 / (len(g) + 1)
    l2_squared = float((width / 3 * (y[:-1] ** 2 + y[:-1] * y[1:] + y[1:] ** 2)).sum())
    l1 = float(np.abs(g).sum() / (len(g) + 1))
    return l2_squared / (l1 * float(np.abs(g).max()))


def _relative(terms: int) -> Fraction:
    """The relative error of a sum of ``terms`` non-negative products of unit-scale heights, each of which
    was itself divided by the largest height (one more rounding per factor)."""
    return Fraction(rounding_bound(terms)) + 4 * Fraction(UNIT_ROUNDOFF)


def first_upper_bound(h: np.ndarray) -> Fraction:
    """A rigorous upper bound on the first value of the heights ``h`` stand for."""
    k = len(h)
    error = _relative(k)
    peak = (Fraction(float(np.convolve(h, h).max())) + k * _UNDERFLOW) / (1 - error)
    total = Fraction(float(h.sum())) / (1 + error)
    return 2 * k * peak / (total * total)


def second_lower_bound(h: np.ndarray) -> Fraction:
    """A rigorous lower bound on the second value (written without the step width, which cancels)."""
    g = np.convolve(h, h)
    y = np.concatenate([[0.0], g, [0.0]])
    error = _relative(len(h)) * 2 + Fraction(rounding_bound(3 * len(y)))
    squares = (Fraction(float((y[:-1] ** 2 + y[:-1] * y[1:] + y[1:] ** 2).sum())) - 3 * len(y) * _UNDERFLOW) \
        * (1 - error)
    total = (Fraction(float(g.sum())) + len(g) * _UNDERFLOW) * (1 + error)
    peak = (Fraction(float(g.max())) + len(h) * _UNDERFLOW) * (1 + error)
    return max(squares, Fraction(0)) / (3 * total * peak)


def score(data: Any, kind: str, best_known: float, direction: str, margin: float = 0.0, **_: Any) -> dict[str, Any]:
    """Trusted side (no constraint but non-negative heights, checked exactly: the registry's tolerance is 0)."""
    h = heights(data)
    value = first_value(h) if kind == "first" else second_value(h)
    bound = first_upper_bound if kind == "first" else second_lower_bound
    return result(value, best_known, direction, f"A step function with {len(h)} steps.", exact=lambda: bound(h),
                  margin=margin, steps=float(len(h)))

"""What every built-in problem shares: loading the candidate (sandbox side) and checking a
construction's shape and numbers (trusted side).

The trusted side checks the mathematics, not the floats: every number is finite and normal (a
subnormal coordinate is refused: products of such numbers round to zero or to a few units in the
last place, which reads a construction as far better than it is); a scale-invariant problem's
construction is brought to unit scale before anything is computed (:func:`unit_scale`); each
problem checks its constraints at the tolerance the best-known registry gives it (``tolerance``,
``problems/best_known.json``, documented in docs/task-suites.md; 0 when a caller gives none); and a
construction that scores above the best known value is checked again exactly (:func:`result`'s
``exact``: rational arithmetic, or a rigorous bound on the rounding error where the exact sums would be
too long) before its score may say that it beats it, by more than the record's ``margin`` (half a unit
of the last digit its source prints).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable
from fractions import Fraction
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from trace_bench._util.errors import TraceBenchError
from trace_bench._util.imports import import_file

TINY = sys.float_info.min  # the smallest normal float: a nonzero number below it is subnormal
UNIT_ROUNDOFF = 2.0**-53

Exact = Callable[[], Fraction]
"""A rigorous bound on the construction's true value: a lower bound where larger is better, an upper
bound where smaller is better (exact when the arithmetic is)."""


class InvalidConstruction(TraceBenchError, ValueError):
    """The candidate's construction breaks a rule of the problem (the message says which)."""


def load_program(program_path: str) -> ModuleType:
    """Import the candidate program (sandbox side only)."""
    return import_file("candidate_program", Path(program_path))


def entry(module: ModuleType, name: str) -> Any:
    function = getattr(module, name, None)
    if not callable(function):
        raise AttributeError(f"the program must define a function named '{name}'")
    return function


def as_array(data: Any, shape: tuple[int | None, ...], what: str) -> np.ndarray:
    """``data`` as a finite float array of ``shape`` (``None`` matches any length), with no subnormal value."""
    try:
        array = np.asarray(data, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidConstruction(f"{what} must be numbers: {exc}") from None
    if array.ndim != len(shape) or any(want is not None and got != want for got, want in zip(array.shape, shape,
                                                                                              strict=True)):
        wanted = "(" + ", ".join("k" if s is None else str(s) for s in shape) + ")"
        raise InvalidConstruction(f"{what} must have shape {wanted}, got {array.shape}")
    if not np.all(np.isfinite(array)):
        raise InvalidConstruction(f"{what} contains NaN or infinite values")
    subnormal = (array != 0) & (np.abs(array) < TINY)
    if subnormal.any():
        index = np.unravel_index(int(np.argmax(subnormal)), array.shape)
        raise InvalidConstruction(f"{what} contains a subnormal number ({array[index]:.3g} at {tuple(map(int, index))}): "
                                  "floating point cannot compute with it; scale the construction up")
    return array


def unit_scale(points: np.ndarray) -> np.ndarray:
    """Points of a scale-invariant problem moved to their centre and scaled so that the largest
    coordinate is 1 (the problem's value does not change; its floating-point computation then
    cannot underflow).  All points at one place are a degenerate construction."""
    centred = points - points.mean(axis=0)
    extent = float(np.abs(centred).max())
    if extent == 0:
        raise InvalidConstruction("every point is at the same place")
    return np.asarray(centred / extent, dtype=float)


def fraction_of_best(value: float, best_known: float, direction: str) -> float:
    """``combined_score``: 1.0 at the best known value, above 1.0 beyond it."""
    if direction == "max":
        return value / best_known
    return best_known / value if value > 0 else 0.0


def beats(bound: Fraction, best_known: float, direction: str, margin: float = 0.0) -> bool:
    """Whether a rigorous bound on a value beats ``best_known`` by more than ``margin`` (compared exactly)."""
    best, slack = Fraction(best_known), Fraction(margin)
    return bound > best + slack if direction == "max" else 0 < bound < best - slack


def rounding_bound(terms: int) -> float:
    """Higham's gamma_n: the relative error of a sum of ``terms`` non-negative products computed in
    floating point, in any order (each product rounded once, each addition once)."""
    n = terms + 1
    return n * UNIT_ROUNDOFF / (1 - n * UNIT_ROUNDOFF)


def result(value: float, best_known: float, direction: str, summary: str, *, exact: Exact | None = None,
           margin: float = 0.0, **metrics: float) -> dict[str, Any]:
    """The evaluator's answer.  Above the best known value, ``exact`` (the problem's exact re-check)
    decides the value that is scored: the construction beats the best known value only if the rigorous
    bound does, by more than ``margin`` (``beats_best_known`` 1.0), and its score is that bound's."""
    if not math.isfinite(value):
        raise InvalidConstruction(f"the construction's value is not finite ({value})")
    score = fraction_of_best(value, best_known, direction)
    better = "higher" if direction == "max" else "lower"
    note = ""
    if score > 1.0 and exact is not None:
        bound = exact()
        verified = beats(bound, best_known, direction, margin)
        metrics = {**metrics, "float_value": value, "beats_best_known": float(verified)}
        value = float(bound)
        score = fraction_of_best(value, best_known, direction)
        note = (f"\nChecked again in exact arithmetic: the value is at {'least' if direction == 'max' else 'most'} "
                f"{value:.12g}, which {'beats' if verified else 'does not beat'} the best known value.")
    # the value to beat is not named here: the guide's feedback names it unless the task hides it (show_target)
    text = f"{summary}\nvalue = {value:.9g} ({better} is better).{note}"
    return {"combined_score": score, "value": value, **metrics, "artifacts": {"summary": text}}


def rationals(values: np.ndarray) -> list[Any]:
    """The numbers of an array as exact rationals (every float is one), nested like the array."""
    return [rationals(row) if isinstance(row, np.ndarray) else Fraction(float(row)) for row in values]

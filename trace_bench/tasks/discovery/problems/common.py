"""What every built-in problem shares: loading the candidate (sandbox side) and checking a
construction's shape and numbers (trusted side)."""

from __future__ import annotations

import math
from pathlib import Path
from types import ModuleType
from typing import Any

import numpy as np

from trace_bench._util.imports import import_file


class InvalidConstruction(ValueError):
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
    """``data`` as a finite float array of ``shape`` (``None`` matches any length)."""
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
    return array


def fraction_of_best(value: float, best_known: float, direction: str) -> float:
    """``combined_score``: 1.0 at the best known value, above 1.0 beyond it."""
    if direction == "max":
        return value / best_known
    return best_known / value if value > 0 else 0.0


def result(value: float, best_known: float, direction: str, summary: str, **metrics: float) -> dict[str, Any]:
    if not math.isfinite(value):
        raise InvalidConstruction(f"the construction's value is not finite ({value})")
    score = fraction_of_best(value, best_known, direction)
    better = "higher" if direction == "max" else "lower"
    text = (f"{summary}\nvalue = {value:.9g} ({better} is better); best known {best_known:g}; "
            f"{100 * score:.3f}% of best known.")
    return {"combined_score": score, "value": value, **metrics, "artifacts": {"summary": text}}

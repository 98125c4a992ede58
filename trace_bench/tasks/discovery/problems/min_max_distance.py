"""n points in d dimensions minimizing (largest distance / smallest distance)^2 (AlphaEvolve
Appendix B.8; the squared ratio is the value, as in the literature it compares with).

The program's ``spread_points(n, d)`` returns ``n`` rows of ``d`` coordinates; the points must be
pairwise distinct.  The ratio does not depend on scale, so the points are brought to unit scale
before it is computed (a grid shrunk until its squared distances round read 10 instead of 18), and
a value that beats the best known one is computed again in rational arithmetic.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from trace_bench.tasks.discovery.problems.common import (
    InvalidConstruction,
    as_array,
    entry,
    load_program,
    rationals,
    result,
    unit_scale,
)

ENTRY = "spread_points"

_HEADER = '''"""Place {n} points in {d} dimensions so that (max pairwise distance / min pairwise distance)^2 is as
small as possible.

spread_points(n, d) returns an array of shape (n, d) of distinct points.
"""
import numpy as np

'''

_START = '''def spread_points(n, d):
    """The first n points of a cubic grid."""
    side = int(np.ceil(n ** (1 / d)))
    return np.array([[(k // side ** axis) % side for axis in range(d)] for k in range(n)], dtype=float)
'''

_LATTICE = '''def spread_points(n, d):
    """The n points of a dense lattice (triangular in 2D, face-centred cubic in 3D) nearest a centre,
    then single-point moves accepted when the squared ratio falls."""
    rng = np.random.default_rng(2)
    r = range(-4, 5)
    if d == 2:
        lattice = np.array([[i + j / 2, j * np.sqrt(3) / 2] for i in r for j in r])
    else:
        lattice = np.array([[i, j, k] for i in r for j in r for k in r if (i + j + k) % 2 == 0], dtype=float)
    centre = np.full(d, 0.25)
    p = lattice[np.argsort(((lattice - centre) ** 2).sum(1))[:n]]

    def ratio(p):
        dist = np.sqrt(((p[:, None] - p[None]) ** 2).sum(-1))[np.triu_indices(len(p), 1)]
        return (dist.max() / dist.min()) ** 2

    value = ratio(p)
    for step in range(STEPS):
        trial = p.copy()
        i = rng.integers(n)
        trial[i] += rng.normal(0, 0.05 * (1 - step / max(STEPS, 1)) + 0.002, d)
        trial_value = ratio(trial)
        if trial_value < value:
            p, value = trial, trial_value
    return p
'''

STUB_CANDIDATES = tuple(f"STEPS = {steps}\n\n\n{_LATTICE}" for steps in (0, 3000))


def program(n: int, d: int, **_: Any) -> str:
    return f"{_HEADER.format(n=n, d=d)}# EVOLVE-BLOCK-START\n{_START}# EVOLVE-BLOCK-END\n"


def run(program_path: str, n: int, d: int, **_: Any) -> Any:
    return np.asarray(entry(load_program(program_path), ENTRY)(n, d), dtype=float)


def ratio_squared(points: np.ndarray) -> tuple[float, float, float]:
    dist = np.sqrt(((points[:, None] - points[None]) ** 2).sum(-1))[np.triu_indices(len(points), 1)]
    smallest, largest = float(dist.min()), float(dist.max())
    if smallest <= 0:
        raise InvalidConstruction("two points coincide (smallest distance 0)")
    return (largest / smallest) ** 2, smallest, largest


def exact_ratio(points: np.ndarray) -> Fraction:
    """The squared ratio in rational arithmetic (squared distances of rational points are rational)."""
    rows = rationals(points)
    squared = [sum(((a - b) ** 2 for a, b in zip(p, q, strict=True)), Fraction(0))
               for i, p in enumerate(rows) for q in rows[i + 1:]]
    if min(squared) == 0:
        raise InvalidConstruction("two points coincide (exact check)")
    return max(squared) / min(squared)


def score(data: Any, n: int, d: int, best_known: float, direction: str = "min", margin: float = 0.0,
          **_: Any) -> dict[str, Any]:
    """Trusted side (no constraint but distinct points, checked exactly: the registry's tolerance is 0)."""
    given = as_array(data, (n, d), f"spread_points({n}, {d})")
    value, smallest, largest = ratio_squared(unit_scale(given))
    return result(value, best_known, direction, f"{n} points in {d}D at unit scale; distances from {smallest:.6g} "
                  f"to {largest:.6g}.", exact=lambda: exact_ratio(given), margin=margin, min_distance=smallest,
                  max_distance=largest)

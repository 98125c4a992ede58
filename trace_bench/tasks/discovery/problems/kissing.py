"""Kissing configurations in d dimensions (AlphaEvolve Appendix B.11, d = 11).

The program's ``kissing_configuration(d)`` returns points with integer coordinates.  A set C is
valid when 0 is not in it and its smallest pairwise distance is at least its largest norm: then
unit spheres centred at 2x/|x| for x in C touch the unit sphere at the origin without
overlapping each other (the lemma AlphaEvolve's construction is checked with).  The value is |C|.
Coordinates are integers (below 2^20 in absolute value), so the check is exact arithmetic.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from trace_bench.tasks.discovery.problems.common import InvalidConstruction, entry, load_program, result

ENTRY = "kissing_configuration"
MAX_COORDINATE = 1 << 20
MAX_POINTS = 5000
TOLERANCE = 0  # kissing_11: integer coordinates, every check exact

_HEADER = '''"""Kissing number in {d} dimensions: as many points with integer coordinates as possible, none at the
origin, whose smallest pairwise distance is at least their largest norm.

kissing_configuration(d) returns an integer array of shape (m, {d}); the score is m.
"""
import numpy as np

'''

_START = '''def kissing_configuration(d):
    """The 2d unit vectors +-e_i (the cross-polytope)."""
    eye = np.eye(d, dtype=int)
    return np.concatenate([eye, -eye])
'''

_ROOTS = '''def kissing_configuration(d):
    """Vectors +-e_i +- e_j: all pairs (i, j), or only neighbouring ones."""
    points = []
    for i in range(d):
        for j in range(i + 1, d):
            if ALL_PAIRS or j == i + 1 or (i == 0 and j == d - 1):
                for si in (1, -1):
                    for sj in (1, -1):
                        v = [0] * d
                        v[i], v[j] = si, sj
                        points.append(v)
    return np.array(points, dtype=int)
'''

STUB_CANDIDATES = tuple(f"ALL_PAIRS = {flag}\n\n\n{_ROOTS}" for flag in (False, True))


def program(d: int, **_: Any) -> str:
    return f"{_HEADER.format(d=d)}# EVOLVE-BLOCK-START\n{_START}# EVOLVE-BLOCK-END\n"


def run(program_path: str, d: int, **_: Any) -> Any:
    points = np.asarray(entry(load_program(program_path), ENTRY)(d))
    if points.dtype.kind not in "iu":
        raise TypeError(f"kissing_configuration must return integers, got dtype {points.dtype}")
    return points.astype(np.int64)


def check(data: Any, d: int) -> np.ndarray:
    try:
        points = np.asarray(data)
    except (TypeError, ValueError) as exc:
        raise InvalidConstruction(f"the configuration must be integers: {exc}") from None
    if points.dtype.kind not in "iu":
        raise InvalidConstruction(f"coordinates must be integers, got dtype {points.dtype}")
    if points.ndim != 2 or points.shape[1] != d or not 1 <= len(points) <= MAX_POINTS:
        raise InvalidConstruction(f"the configuration must have shape (m, {d}) with 1 <= m <= {MAX_POINTS}, "
                                  f"got {points.shape}")
    if np.abs(points).max() >= MAX_COORDINATE:
        raise InvalidConstruction(f"coordinates must stay below {MAX_COORDINATE} in absolute value")
    return points.astype(np.int64)


def score(data: Any, d: int, best_known: float, direction: str = "max", **_: Any) -> dict[str, Any]:
    points = check(data, d)
    norms = (points * points).sum(1)
    if np.any(norms == 0):
        raise InvalidConstruction(f"point {int(np.argmin(norms))} is the origin")
    gram = points @ points.T
    distances = norms[:, None] + norms[None] - 2 * gram
    np.fill_diagonal(distances, np.iinfo(np.int64).max)
    smallest, largest = int(distances.min()), int(norms.max())
    if smallest < largest:
        i, j = np.unravel_index(int(np.argmin(distances)), distances.shape)
        raise InvalidConstruction(f"points {i} and {j} are closer (squared distance {smallest}) than the largest "
                                  f"norm (squared {largest}); the spheres would overlap")
    return result(float(len(points)), best_known, direction, f"{len(points)} kissing spheres in {d} dimensions.",
                  exact=lambda: Fraction(len(points)),  # the integer check above is exact already
                  min_squared_distance=float(smallest), max_squared_norm=float(largest))

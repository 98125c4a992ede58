"""Kissing configurations in d dimensions (AlphaEvolve Appendix B.11, d = 11).

The program's ``kissing_configuration(d)`` returns points with integer coordinates.  A set C is
valid when 0 is not in it and its smallest pairwise distance is at least its largest norm: then
unit spheres centred at 2x/|x| for x in C touch the unit sphere at the origin without
overlapping each other (the lemma AlphaEvolve's construction is checked with).  The value is |C|.

Coordinates are integers below 2^52 in absolute value: AlphaEvolve's 593-point construction, in the
representation it was published in, has coordinates up to about 6.3e12 (2^43), whose squared norms
(about 4e26) no 64-bit integer holds.  The check is exact all the same: norms are Python integers, the
pairwise distances are computed in floating point with a rigorous bound on their rounding error
(every coordinate below 2^52 is exact as a float), and every pair that bound cannot decide is
computed again in integers.  The registry's tolerance is 0.
"""

from __future__ import annotations

from fractions import Fraction
from typing import Any

import numpy as np

from trace_bench.tasks.discovery.problems.common import (
    InvalidConstruction,
    entry,
    load_program,
    result,
    rounding_bound,
)

ENTRY = "kissing_configuration"
MAX_COORDINATE = 1 << 52  # floats hold every integer below it exactly
MAX_POINTS = 5000
_ROWS = 512  # rows of the distance matrix computed at once (memory: 512 x MAX_POINTS floats)
UNIT_ROUNDOFF = 2.0**-53

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
    if ((points >= MAX_COORDINATE) | (points <= -MAX_COORDINATE)).any():  # never abs(): abs(-2**63) < 0
        raise InvalidConstruction(f"coordinates must stay below {MAX_COORDINATE} in absolute value")
    return points.astype(np.int64)


def closest_pair(points: np.ndarray, norms: list[int]) -> tuple[int, int, int]:
    """The pair of points at the smallest squared distance that matters and that distance, exactly: the
    exact minimum over every pair the float computation cannot place above the largest norm (when all
    pairs clear it, the closest float pair, computed again in integers)."""
    largest = max(norms)
    floats, norm_floats = points.astype(float), np.array(norms, dtype=float)
    # |float - exact| <= gamma_(d+2) (N_i + N_j + 2 sum |x_i| |x_j|) <= 2 gamma_(d+2) (N_i + N_j), each norm
    # rounded once more to a float: a pair whose float distance clears the largest norm by twice that clears it
    gamma = 4 * rounding_bound(points.shape[1] + 4)
    doubtful: list[tuple[int, int]] = []
    nearest = (float("inf"), 0, 1)
    for start in range(0, len(points), _ROWS):
        block = slice(start, start + _ROWS)
        sums = norm_floats[block, None] + norm_floats[None]
        distances = sums - 2 * (floats[block] @ floats.T)
        rows, cols = np.indices(distances.shape)
        distances[rows + start >= cols] = np.inf  # each pair once
        low = distances - gamma * sums
        if np.isfinite(distances).any():
            i, j = np.unravel_index(int(np.argmin(distances)), distances.shape)
            nearest = min(nearest, (float(distances[i, j]), int(i) + start, int(j)))
        doubtful += [(int(i) + start, int(j)) for i, j in np.argwhere(low <= float(largest) * (1 + 4 * UNIT_ROUNDOFF))]
    rows_int = points.tolist()

    def exact(i: int, j: int) -> int:
        return sum((a - b) * (a - b) for a, b in zip(rows_int[i], rows_int[j], strict=True))

    pairs = doubtful or [nearest[1:]]
    return min(((i, j, exact(i, j)) for i, j in pairs), key=lambda t: t[2])


def score(data: Any, d: int, best_known: float, direction: str = "max", margin: float = 0.0,
          **_: Any) -> dict[str, Any]:
    """Trusted side: every check in exact integer arithmetic (see the module doc)."""
    points = check(data, d)
    norms = [sum(v * v for v in row) for row in points.tolist()]
    if min(norms) == 0:
        raise InvalidConstruction(f"point {norms.index(0)} is the origin")
    largest = max(norms)
    if len(points) < 2:
        return result(1.0, best_known, direction, f"1 kissing sphere in {d} dimensions.",
                      exact=lambda: Fraction(1), margin=margin, max_squared_norm=float(largest))
    i, j, smallest = closest_pair(points, norms)
    if smallest < largest:
        raise InvalidConstruction(f"points {i} and {j} are closer (squared distance {smallest}) than the largest "
                                  f"norm (squared {largest}); the spheres would overlap")
    return result(float(len(points)), best_known, direction, f"{len(points)} kissing spheres in {d} dimensions.",
                  exact=lambda: Fraction(len(points)),  # the integer check above is exact already
                  margin=margin, min_squared_distance=float(smallest), max_squared_norm=float(largest))

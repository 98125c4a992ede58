"""Circles in the unit square, maximizing the sum of radii (AlphaEvolve Appendix B.12).

The program's ``pack_circles(n)`` returns ``n`` rows ``[x, y, r]``.  A packing is valid when every
circle lies in ``[0, 1]^2`` and no two overlap; both checks allow the registry's tolerance (1e-12
for both problems: a packing whose circles touch exactly may read a hair closer in floating point),
far too little to change the sum of radii in any digit that matters.  A packing whose sum beats the
best known value is checked again in rational arithmetic, and what is scored is then the sum of its
radii each less the tolerance: a packing that is valid with no tolerance at all.
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
)

ENTRY = "pack_circles"

_HEADER = '''"""Pack {n} disjoint circles into the unit square [0, 1] x [0, 1], maximizing the sum of their radii.

pack_circles(n) returns an array of shape (n, 3) whose rows are [x, y, r].
"""
import numpy as np

'''

_GRID = '''def pack_circles(n):
    """Equal circles on a square grid; neighbours touch."""
    side = int(np.ceil(np.sqrt(n)))
    r = 0.5 / side
    return np.array([[(2 * (k % side) + 1) * r, (2 * (k // side) + 1) * r, r] for k in range(n)])
'''

_ROWS = '''def pack_circles(n):
    """Rows of unequal length centred in the square; each radius grown until it touches a wall or a neighbour."""
    rows = max(1, int(round(np.sqrt(n))))
    counts = [n // rows + (1 if k < n % rows else 0) for k in range(rows)]
    centers = np.array([((i + 0.5) / c, (k + 0.5) / rows) for k, c in enumerate(counts) for i in range(c)])
    wall = np.minimum(np.minimum(centers[:, 0], 1 - centers[:, 0]), np.minimum(centers[:, 1], 1 - centers[:, 1]))
    d = np.sqrt(((centers[:, None] - centers[None]) ** 2).sum(-1)) + np.eye(n) * 10
    r = np.zeros(n)
    for _ in range(200):
        for i in range(n):
            r[i] = max(0.0, min(wall[i], (d[i] - r).min()))
    return np.column_stack([centers, r])
'''

_DESCENT = '''def pack_circles(n):
    """Gradient ascent on sum(r) with growing overlap penalties, then radii shrunk until valid."""
    rng = np.random.default_rng(0)
    side = int(np.ceil(np.sqrt(n)))
    x = np.array([((k % side + 0.5) / side, (k // side + 0.5) / side) for k in range(n)]) + rng.normal(0, 0.01, (n, 2))
    r = np.full(n, 0.3 / side)
    eye = np.eye(n)
    for t in range(3000):
        lam = 10 + 3000 * t / 3000
        diff = x[:, None] - x[None]
        d = np.sqrt((diff ** 2).sum(-1)) + eye
        over = np.maximum(r[:, None] + r[None] - d, 0) * (1 - eye)
        low, high = np.maximum(r[:, None] - x, 0), np.maximum(x + r[:, None] - 1, 0)
        r = np.maximum(r + 0.0005 * (1 - 2 * lam * (over.sum(1) + low.sum(1) + high.sum(1))), 0)
        x = np.clip(x + 0.0005 * 2 * lam * ((over[:, :, None] * diff / d[:, :, None]).sum(1) + low - high), 0, 1)
    wall = np.minimum(np.minimum(x[:, 0], 1 - x[:, 0]), np.minimum(x[:, 1], 1 - x[:, 1]))
    r = np.minimum(r, wall)
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1)) + eye * 10
    for _ in range(10000):
        over = r[:, None] + r[None] - d
        i, j = np.unravel_index(np.argmax(over), over.shape)
        if over[i, j] <= 0:
            break
        scale = d[i, j] / (r[i] + r[j]) * (1 - 1e-12)
        r[i] *= scale
        r[j] *= scale
    return np.column_stack([x, r])
'''

STUB_CANDIDATES = (_ROWS, _DESCENT)


def program(n: int, **_: Any) -> str:
    return f"{_HEADER.format(n=n)}# EVOLVE-BLOCK-START\n{_GRID}# EVOLVE-BLOCK-END\n"


def run(program_path: str, n: int, **_: Any) -> Any:
    """Sandbox side: the candidate's packing, as numbers."""
    circles = entry(load_program(program_path), ENTRY)(n)
    return np.asarray(circles, dtype=float)


def check(circles: Any, n: int, tolerance: float = 0.0) -> np.ndarray:
    """The packing as an (n, 3) array, or :class:`InvalidConstruction` naming the first broken rule
    (``tolerance``: how far a circle may cross a wall or a neighbour)."""
    array = as_array(circles, (n, 3), f"pack_circles({n})")
    x, y, r = array.T
    if np.any(r < 0):
        raise InvalidConstruction(f"circle {int(np.argmin(r))} has a negative radius")
    outside = (x - r < -tolerance) | (y - r < -tolerance) | (x + r > 1 + tolerance) | (y + r > 1 + tolerance)
    if outside.any():
        i = int(np.argmax(outside))
        raise InvalidConstruction(f"circle {i} at ({x[i]:.6f}, {y[i]:.6f}) with r={r[i]:.6f} leaves the unit square")
    overlap = r[:, None] + r[None] - np.sqrt((x[:, None] - x[None]) ** 2 + (y[:, None] - y[None]) ** 2)
    np.fill_diagonal(overlap, -np.inf)
    if overlap.max() > tolerance:
        a, b = (int(k) for k in np.unravel_index(int(np.argmax(overlap)), overlap.shape))
        raise InvalidConstruction(f"circles {a} and {b} overlap by {overlap[a, b]:.3g}")
    return array


def exact_sum(circles: np.ndarray, tolerance: float = 0.0) -> Fraction:
    """The packing's constraints in rational arithmetic, at ``tolerance``; the sum of the radii each
    less the tolerance (those circles lie in the square and are disjoint with no tolerance at all)."""
    slack = Fraction(tolerance)
    rows = rationals(circles)
    for i, (x, y, r) in enumerate(rows):
        if min(x - r, y - r, 1 - x - r, 1 - y - r) < -slack:
            raise InvalidConstruction(f"circle {i} leaves the unit square by more than {tolerance:g} (exact check)")
    for i, (xi, yi, ri) in enumerate(rows):
        for j in range(i + 1, len(rows)):
            xj, yj, rj = rows[j]
            reach = ri + rj - slack
            if reach > 0 and reach * reach > (xi - xj) ** 2 + (yi - yj) ** 2:
                raise InvalidConstruction(f"circles {i} and {j} overlap by more than {tolerance:g} (exact check)")
    return sum((max(r - slack, Fraction(0)) for _, _, r in rows), Fraction(0))


def score(data: Any, n: int, best_known: float, direction: str = "max", tolerance: float = 0.0, margin: float = 0.0,
          **_: Any) -> dict[str, Any]:
    """Trusted side: check the packing again and sum the radii."""
    circles = check(data, n, tolerance)
    radii = circles[:, 2]
    smallest = ", ".join(f"#{i} (r={radii[i]:.4f})" for i in np.argsort(radii)[:3])
    return result(float(radii.sum()), best_known, direction, f"A valid packing of {n} circles; smallest: {smallest}.",
                  exact=lambda: exact_sum(circles, tolerance), margin=margin, smallest_radius=float(radii.min()))

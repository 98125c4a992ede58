"""Heilbronn problems: n points whose smallest triangle is as large as possible (AlphaEvolve
Appendix B.9 and B.10).

- ``region: triangle``: the points lie on or inside the equilateral triangle with corners
  (0, 0), (1, 0), (1/2, sqrt(3)/2); the value is the smallest triangle's area divided by that
  triangle's area (so the region has unit area, as in the statement).
- ``region: convex``: the points lie anywhere; the value is the smallest triangle's area divided by
  the area of the points' convex hull (the smallest convex region holding them).

The program's ``heilbronn_points(n)`` returns ``n`` rows ``[x, y]``.  In the triangle, points may lie
up to the registry's tolerance outside it (1e-12); the convex form does not depend on scale (and has
no constraint: tolerance 0), so its points are brought to unit scale before anything is computed.  A value that beats the best known one is
computed again in rational arithmetic (for the triangle: with the points moved towards its centre
until none is outside, the bound that scores).
"""

from __future__ import annotations

import itertools
import math
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

ENTRY = "heilbronn_points"
# Rational bounds on sqrt(3) (each checked by squaring below): the exact checks compare with them.
SQRT3_LOW, SQRT3_HIGH = Fraction(17320508075688772, 10**16), Fraction(17320508075688773, 10**16)
assert SQRT3_LOW**2 < 3 < SQRT3_HIGH**2
SQRT3 = math.sqrt(3.0)
TRIANGLE = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, SQRT3 / 2]])

_HEADER = '''"""Heilbronn problem ({region}): place {n} points {where} so that the smallest triangle they form
has the largest possible area{normalised}.

heilbronn_points(n) returns an array of shape (n, 2).
"""
import numpy as np

'''

_TRIANGLE_START = '''def heilbronn_points(n):
    """Points spread along the three sides of the triangle (0, 0), (1, 0), (1/2, sqrt(3)/2)."""
    corners = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2]])
    t = (np.arange(n) + 0.5) / n * 3
    side = np.minimum(t.astype(int), 2)
    frac = t - side
    return corners[side] + frac[:, None] * (corners[(side + 1) % 3] - corners[side])
'''

_CONVEX_START = '''def heilbronn_points(n):
    """Points on a square grid, one row at a time."""
    side = int(np.ceil(np.sqrt(n)))
    return np.array([[k % side, k // side] for k in range(n)], dtype=float) / side
'''

_SEARCH = '''def heilbronn_points(n):
    """Random restarts, each refined by moving one point at a time while the smallest triangle grows."""
    rng = np.random.default_rng(1)
    corners = np.array([[0.0, 0.0], [1.0, 0.0], [0.5, np.sqrt(3) / 2]])
    triples = np.array([(i, j, k) for i in range(n) for j in range(i + 1, n) for k in range(j + 1, n)])

    def inside(p):
        return REGION == "convex" or (p[1] >= 0 and np.sqrt(3) * p[0] >= p[1] and np.sqrt(3) * (1 - p[0]) >= p[1])

    def sample():
        if REGION == "convex":
            return rng.random(2)
        a, b = rng.random(2)
        if a + b > 1:
            a, b = 1 - a, 1 - b
        return corners[0] + a * (corners[1] - corners[0]) + b * (corners[2] - corners[0])

    def quality(p):
        a, b, c = p[triples[:, 0]], p[triples[:, 1]], p[triples[:, 2]]
        area = np.abs((b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (c[:, 0] - a[:, 0]) * (b[:, 1] - a[:, 1])) / 2
        if REGION == "convex":
            return area.min() / max(hull_area(p), 1e-12)
        return area.min()

    def hull_area(p):
        pts = sorted(map(tuple, p))
        def half(points):
            out = []
            for q in points:
                while len(out) >= 2 and (out[-1][0] - out[-2][0]) * (q[1] - out[-2][1]) - (out[-1][1] - out[-2][1]) * (q[0] - out[-2][0]) <= 0:
                    out.pop()
                out.append(q)
            return out
        hull = half(pts)[:-1] + half(pts[::-1])[:-1]
        return 0.5 * abs(sum(hull[i][0] * hull[i - 1][1] - hull[i - 1][0] * hull[i][1] for i in range(len(hull))))

    best, best_q = None, -1.0
    for _ in range(ROUNDS):
        p = np.array([sample() for _ in range(n)])
        q = quality(p)
        for step in range(STEPS):
            i = rng.integers(n)
            trial = p.copy()
            trial[i] += rng.normal(0, 0.05 * (1 - step / STEPS) + 1e-3, 2)
            if inside(trial[i]):
                tq = quality(trial)
                if tq > q:
                    p, q = trial, tq
        if q > best_q:
            best, best_q = p, q
    return best
'''

STUB_CANDIDATES: dict[str, tuple[str, ...]] = {
    region: tuple(f'REGION = "{region}"\nROUNDS, STEPS = {rounds}, {steps}\n\n\n{_SEARCH}'
                  for rounds, steps in ((3, 150), (6, 600)))
    for region in ("triangle", "convex")
}


def program(n: int, region: str, **_: Any) -> str:
    where = "on or inside the equilateral triangle (0, 0), (1, 0), (1/2, sqrt(3)/2)" if region == "triangle" \
        else "anywhere in the plane"
    normalised = " relative to the triangle's area" if region == "triangle" else \
        " relative to the area of their convex hull"
    start = _TRIANGLE_START if region == "triangle" else _CONVEX_START
    header = _HEADER.format(region=region, n=n, where=where, normalised=normalised)
    return f"{header}# EVOLVE-BLOCK-START\n{start}# EVOLVE-BLOCK-END\n"


def run(program_path: str, n: int, **_: Any) -> Any:
    return np.asarray(entry(load_program(program_path), ENTRY)(n), dtype=float)


def triangle_areas(points: np.ndarray) -> np.ndarray:
    triples = np.array(list(itertools.combinations(range(len(points)), 3)))
    a, b, c = points[triples[:, 0]], points[triples[:, 1]], points[triples[:, 2]]
    return np.abs((b[:, 0] - a[:, 0]) * (c[:, 1] - a[:, 1]) - (c[:, 0] - a[:, 0]) * (b[:, 1] - a[:, 1])) / 2


def hull_area(points: np.ndarray) -> float:
    """Area of the convex hull (Andrew's monotone chain, then the shoelace formula)."""
    ordered = sorted(map(tuple, points.tolist()))

    def chain(sequence: list[tuple[float, float]]) -> list[tuple[float, float]]:
        kept: list[tuple[float, float]] = []
        for q in sequence:
            while len(kept) >= 2 and ((kept[-1][0] - kept[-2][0]) * (q[1] - kept[-2][1])
                                      - (kept[-1][1] - kept[-2][1]) * (q[0] - kept[-2][0])) <= 0:
                kept.pop()
            kept.append(q)
        return kept

    hull = chain(ordered)[:-1] + chain(ordered[::-1])[:-1]
    return 0.5 * abs(sum(hull[i][0] * hull[i - 1][1] - hull[i - 1][0] * hull[i][1] for i in range(len(hull))))


def check(data: Any, n: int, region: str, tolerance: float = 0.0) -> np.ndarray:
    """The points, checked (``tolerance``: how far outside the triangle a point may lie)."""
    points = as_array(data, (n, 2), f"heilbronn_points({n})")
    if region == "triangle":
        x, y = points.T
        outside = (y < -tolerance) | (SQRT3 * x - y < -tolerance) | (SQRT3 * (1 - x) - y < -tolerance)
        if outside.any():
            i = int(np.argmax(outside))
            raise InvalidConstruction(f"point {i} ({x[i]:.6f}, {y[i]:.6f}) lies outside the triangle")
    return points


def _sqrt3_times_at_least(a: Fraction, b: Fraction) -> bool:
    """Whether a * sqrt(3) >= b, decided exactly (by squaring)."""
    if a >= 0:
        return b <= 0 or 3 * a * a >= b * b
    return b < 0 and 3 * a * a <= b * b


def _smallest_area(rows: list[list[Fraction]]) -> Fraction:
    return min(abs((b[0] - a[0]) * (c[1] - a[1]) - (c[0] - a[0]) * (b[1] - a[1])) / 2
               for a, b, c in itertools.combinations(rows, 3))


def _hull_area(rows: list[list[Fraction]]) -> Fraction:
    ordered = sorted({(p[0], p[1]) for p in rows})

    def chain(sequence: list[tuple[Fraction, Fraction]]) -> list[tuple[Fraction, Fraction]]:
        kept: list[tuple[Fraction, Fraction]] = []
        for q in sequence:
            while len(kept) >= 2 and ((kept[-1][0] - kept[-2][0]) * (q[1] - kept[-2][1])
                                      - (kept[-1][1] - kept[-2][1]) * (q[0] - kept[-2][0])) <= 0:
                kept.pop()
            kept.append(q)
        return kept

    hull = chain(ordered)[:-1] + chain(ordered[::-1])[:-1]
    return abs(sum((hull[i][0] * hull[i - 1][1] - hull[i - 1][0] * hull[i][1] for i in range(len(hull))),
                   Fraction(0))) / 2


def exact_value(points: np.ndarray, region: str, tolerance: float = 0.0) -> Fraction:
    """A lower bound on the value in rational arithmetic: exact for the convex form; for the triangle,
    the points moved towards its centre (by the factor that brings a point ``tolerance`` outside to its
    edge), whose smallest triangle is that factor squared times the given one's."""
    rows = rationals(points)
    if region == "convex":
        area = _hull_area(rows)
        if area == 0:
            raise InvalidConstruction("the points are collinear (exact check)")
        return _smallest_area(rows) / area
    slack = Fraction(tolerance)
    for i, (x, y) in enumerate(rows):
        if y < -slack or not _sqrt3_times_at_least(x, y - slack) or not _sqrt3_times_at_least(1 - x, y - slack):
            raise InvalidConstruction(f"point {i} lies outside the triangle by more than {tolerance:g} (exact check)")
    inradius = SQRT3_LOW / 6
    shrink = inradius / (inradius + slack)
    return 4 * shrink * shrink * _smallest_area(rows) / SQRT3_HIGH


def score(data: Any, n: int, region: str, best_known: float, direction: str = "max", tolerance: float = 0.0,
          margin: float = 0.0, **_: Any) -> dict[str, Any]:
    given = check(data, n, region, tolerance)
    points = unit_scale(given) if region == "convex" else given
    smallest = float(triangle_areas(points).min())
    area = hull_area(points) if region == "convex" else SQRT3 / 4
    if area <= 0:
        raise InvalidConstruction("the points are collinear: their convex hull has no area")
    value = smallest / area
    return result(value, best_known, direction,
                  f"{n} points; smallest triangle area {smallest:.6g} over region area {area:.6g}"
                  f"{' (at unit scale)' if region == 'convex' else ''}.",
                  exact=lambda: exact_value(given, region, tolerance), margin=margin, smallest_triangle=smallest,
                  region_area=area)

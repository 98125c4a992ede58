"""Heilbronn problems: n points whose smallest triangle is as large as possible (AlphaEvolve
Appendix B.9 and B.10).

- ``region: triangle``: the points lie on or inside the equilateral triangle with corners
  (0, 0), (1, 0), (1/2, sqrt(3)/2); the value is the smallest triangle's area divided by that
  triangle's area (so the region has unit area, as in the statement).
- ``region: convex``: the points lie anywhere; the value is the smallest triangle's area divided by
  the area of the points' convex hull (the smallest convex region holding them).

The program's ``heilbronn_points(n)`` returns ``n`` rows ``[x, y]``.
"""

from __future__ import annotations

import itertools
import math
from typing import Any

import numpy as np

from trace_bench.tasks.discovery.problems.common import (
    InvalidConstruction,
    as_array,
    entry,
    load_program,
    result,
)

ENTRY = "heilbronn_points"
TOLERANCE = 1e-12
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


def check(data: Any, n: int, region: str) -> np.ndarray:
    points = as_array(data, (n, 2), f"heilbronn_points({n})")
    if region == "triangle":
        x, y = points.T
        outside = (y < -TOLERANCE) | (SQRT3 * x - y < -TOLERANCE) | (SQRT3 * (1 - x) - y < -TOLERANCE)
        if outside.any():
            i = int(np.argmax(outside))
            raise InvalidConstruction(f"point {i} ({x[i]:.6f}, {y[i]:.6f}) lies outside the triangle")
    return points


def score(data: Any, n: int, region: str, best_known: float, direction: str = "max", **_: Any) -> dict[str, Any]:
    points = check(data, n, region)
    smallest = float(triangle_areas(points).min())
    area = hull_area(points) if region == "convex" else SQRT3 / 4
    if area <= 0:
        raise InvalidConstruction("the points are collinear: their convex hull has no area")
    value = smallest / area
    return result(value, best_known, direction,
                  f"{n} points; smallest triangle area {smallest:.6g} over region area {area:.6g}.",
                  smallest_triangle=smallest, region_area=area)

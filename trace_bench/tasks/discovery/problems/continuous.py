"""The continuous forms of the built-in problems: each stated as ``minimize f(x) subject to g(x) >= 0``
(and ``h(x) = 0``) over a real vector, for classical solvers (the ``SLSQPMultistart`` baseline).

A form turns a solution ``x`` into the construction the problem's ``run()`` returns and renders it as
an evolve block (a function that returns those numbers), so a solver's result is scored like any
candidate: in the sandbox, then by the trusted scorer.  Nothing here is trusted to score: the forms
only propose.  Smooth reformulations (the usual epigraph trick: maximise a slack ``t`` below every
term of a min) keep them differentiable; ``construction`` repairs the last float of infeasibility a
solver leaves (shrinking radii, clipping heights), so what is scored is valid with no tolerance.

Problems without a form say why (``no_continuous_form`` in :mod:`trace_bench.tasks.discovery.catalog`,
static so that listing imports nothing): the kissing problem's points are integers; the convex
Heilbronn problem's value divides by the area of a convex hull, which is not a smooth function of the
points.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

Vector = np.ndarray
Bounds = Sequence[tuple[float | None, float | None]]


@dataclass(frozen=True)
class ContinuousForm:
    """``minimize objective(x)`` subject to ``inequalities(x) >= 0``, ``equalities(x) == 0`` and ``bounds``."""

    name: str
    size: int
    objective: Callable[[Vector], float]
    start: Callable[[np.random.Generator], Vector]
    construction: Callable[[Vector], Any]
    function: str
    arguments: str
    inequalities: Callable[[Vector], Vector] | None = None
    equalities: Callable[[Vector], Vector] | None = None
    bounds: Bounds = field(default_factory=list)
    #: analytic derivatives where written (else a solver differences numerically)
    gradient: Callable[[Vector], Vector] | None = None
    inequalities_jacobian: Callable[[Vector], Vector] | None = None

    def block(self, construction: Any, note: str) -> str:
        """An evolve block returning ``construction`` (floats written in full precision)."""
        literal = _literal(np.asarray(construction, dtype=float).tolist())
        return (f"def {self.function}({self.arguments}):\n    \"\"\"{note}\"\"\"\n"
                f"    return np.array({literal})\n")


def _literal(value: Any) -> str:
    if isinstance(value, list):
        return "[" + ", ".join(_literal(item) for item in value) + "]"
    return repr(float(value))


def _pairs(n: int) -> tuple[Vector, Vector]:
    i, j = np.triu_indices(n, 1)
    return i, j


def circle_packing(n: int) -> ContinuousForm:
    """x = (centres x, centres y, radii); maximize the sum of radii."""
    i, j = _pairs(n)

    def split(x: Vector) -> tuple[Vector, Vector, Vector]:
        return x[:n], x[n:2 * n], x[2 * n:]

    def inequalities(x: Vector) -> Vector:
        cx, cy, r = split(x)
        walls = np.concatenate([cx - r, cy - r, 1 - cx - r, 1 - cy - r])
        return np.concatenate([walls, (cx[i] - cx[j]) ** 2 + (cy[i] - cy[j]) ** 2 - (r[i] + r[j]) ** 2])

    def start(rng: np.random.Generator) -> Vector:
        return np.concatenate([rng.uniform(0.1, 0.9, 2 * n), np.full(n, 0.02)])

    def construction(x: Vector) -> Vector:
        cx, cy, r = (np.clip(part, 0.0, 1.0) for part in split(np.asarray(x, dtype=float)))
        r = np.minimum(r, np.minimum(np.minimum(cx, cy), np.minimum(1 - cx, 1 - cy)))
        for _ in range(50):  # shrink every overlapping pair until none overlaps in floating point
            reach = r[i] + r[j]
            gap = np.sqrt((cx[i] - cx[j]) ** 2 + (cy[i] - cy[j]) ** 2)
            bad = reach > gap
            if not bad.any():
                break
            for a, b, d, s in zip(i[bad], j[bad], gap[bad], reach[bad], strict=True):
                scale = d / s * (1 - 1e-12) if s > 0 else 0.0
                r[a], r[b] = r[a] * scale, r[b] * scale
        return np.column_stack([cx, cy, np.maximum(r, 0.0)])

    def jacobian(x: Vector) -> Vector:
        cx, cy, r = split(x)
        eye, pairs = np.eye(n), np.zeros((len(i), 3 * n))
        walls = np.block([[eye, 0 * eye, -eye], [0 * eye, eye, -eye], [-eye, 0 * eye, -eye], [0 * eye, -eye, -eye]])
        rows = np.arange(len(i))
        dx, dy, reach = 2 * (cx[i] - cx[j]), 2 * (cy[i] - cy[j]), -2 * (r[i] + r[j])
        pairs[rows, i], pairs[rows, j] = dx, -dx
        pairs[rows, n + i], pairs[rows, n + j] = dy, -dy
        pairs[rows, 2 * n + i], pairs[rows, 2 * n + j] = reach, reach
        return np.vstack([walls, pairs])

    gradient = np.concatenate([np.zeros(2 * n), -np.ones(n)])
    bounds: Bounds = [(0.0, 1.0)] * (2 * n) + [(0.0, 0.5)] * n
    return ContinuousForm(f"circle_packing_{n}", 3 * n, lambda x: -float(np.sum(x[2 * n:])), start, construction,
                          "pack_circles", "n", inequalities=inequalities, bounds=bounds,
                          gradient=lambda x: gradient, inequalities_jacobian=jacobian)


SQRT3 = math.sqrt(3.0)


def heilbronn_triangle(n: int) -> ContinuousForm:
    """x = (points x, points y, t); maximize t, the smallest doubled triangle area squared above t^2."""
    a, b, c = (np.array(column) for column in zip(*_triples(n), strict=True))

    def inequalities(x: Vector) -> Vector:
        px, py, t = x[:n], x[n:2 * n], x[-1]
        det = (px[b] - px[a]) * (py[c] - py[a]) - (px[c] - px[a]) * (py[b] - py[a])
        inside = np.concatenate([py, SQRT3 * px - py, SQRT3 * (1 - px) - py])
        return np.concatenate([inside, det * det - t * t])

    def start(rng: np.random.Generator) -> Vector:
        u, v = rng.random(n), rng.random(n)
        flip = u + v > 1
        u[flip], v[flip] = 1 - u[flip], 1 - v[flip]
        return np.concatenate([u + 0.5 * v, SQRT3 / 2 * v, [0.0]])

    def construction(x: Vector) -> Vector:
        points = np.column_stack([x[:n], x[n:2 * n]])
        centre = np.array([0.5, SQRT3 / 6])
        for _ in range(60):  # move points that a float puts outside the triangle towards its centre
            px, py = points.T
            outside = (py < 0) | (SQRT3 * px - py < 0) | (SQRT3 * (1 - px) - py < 0)
            if not outside.any():
                break
            points[outside] = centre + (points[outside] - centre) * (1 - 1e-12)
        return points

    bounds: Bounds = [(0.0, 1.0)] * n + [(0.0, SQRT3 / 2)] * n + [(0.0, None)]
    return ContinuousForm("heilbronn_triangle_11", 2 * n + 1, lambda x: -float(x[-1]), start, construction,
                          "heilbronn_points", "n", inequalities=inequalities, bounds=bounds)


def _triples(n: int) -> list[tuple[int, int, int]]:
    return [(p, q, r) for p in range(n) for q in range(p + 1, n) for r in range(q + 1, n)]


def min_max_distance(n: int, d: int) -> ContinuousForm:
    """x = (points, s); minimize s with every squared distance in [1, s]."""
    i, j = _pairs(n)

    def squared(x: Vector) -> Vector:
        points = x[:-1].reshape(n, d)
        return np.asarray(np.sum((points[i] - points[j]) ** 2, axis=1), dtype=float)

    def inequalities(x: Vector) -> Vector:
        distances = squared(x)
        return np.concatenate([distances - 1.0, x[-1] - distances])

    def start(rng: np.random.Generator) -> Vector:
        points = rng.uniform(0, 1.5 * n ** (1 / d), (n, d))
        return np.concatenate([points.ravel(), [float(np.max(squared(np.append(points.ravel(), 0.0)))) + 1.0]])

    return ContinuousForm(f"min_max_distance_{n}_{d}d", n * d + 1, lambda x: float(x[-1]), start,
                          lambda x: np.asarray(x[:-1], dtype=float).reshape(n, d), "spread_points", "n, d",
                          inequalities=inequalities)


def _heights(x: Vector) -> Vector:
    return np.asarray(np.maximum(np.asarray(x[:-1], dtype=float), 0.0), dtype=float)


def first_autocorrelation(steps: int) -> ContinuousForm:
    """x = (heights summing to ``steps``, t); minimize t above 2 max(h*h) / steps."""

    def inequalities(x: Vector) -> Vector:
        return np.asarray(x[-1] - 2 * np.convolve(x[:-1], x[:-1]) / steps, dtype=float)

    def start(rng: np.random.Generator) -> Vector:
        h = rng.uniform(0.2, 1.8, steps)
        h *= steps / h.sum()
        return np.append(h, float(2 * np.convolve(h, h).max() / steps))

    return ContinuousForm("first_autocorrelation", steps + 1, lambda x: float(x[-1]), start, _heights,
                          "step_heights", "", inequalities=inequalities,
                          equalities=lambda x: np.array([np.sum(x[:-1]) - steps]),
                          bounds=[(0.0, None)] * steps + [(0.0, None)])


def second_autocorrelation(steps: int) -> ContinuousForm:
    """x = (heights summing to ``steps``, t >= every g = h*h); maximize ||g||_2^2 / (||g||_1 t)."""

    def ratio(x: Vector) -> float:
        g = np.convolve(x[:-1], x[:-1])
        y = np.concatenate([[0.0], g, [0.0]])
        squares = float(np.sum(y[:-1] ** 2 + y[:-1] * y[1:] + y[1:] ** 2)) / 3
        return squares / (float(np.sum(g)) * max(float(x[-1]), 1e-300))

    def start(rng: np.random.Generator) -> Vector:
        h = rng.uniform(0.2, 1.8, steps)
        h *= steps / h.sum()
        return np.append(h, float(np.convolve(h, h).max()))

    return ContinuousForm("second_autocorrelation", steps + 1, lambda x: -ratio(x), start, _heights,
                          "step_heights", "", inequalities=lambda x: x[-1] - np.convolve(x[:-1], x[:-1]),
                          equalities=lambda x: np.array([np.sum(x[:-1]) - steps]),
                          bounds=[(0.0, None)] * steps + [(1e-9, None)])


def erdos_overlap(steps: int) -> ContinuousForm:
    """x = (values in [0, 1] summing to steps / 2, t); minimize t above every overlap 2/k sum h (1 - h)."""

    def inequalities(x: Vector) -> Vector:
        h = x[:-1]
        return np.asarray(x[-1] - 2 * np.correlate(h, 1 - h, mode="full") / steps, dtype=float)

    def start(rng: np.random.Generator) -> Vector:
        h = np.clip(rng.uniform(0, 1, steps), 0, 1)
        h = np.clip(h * (steps / 2) / h.sum(), 0, 1)
        return np.append(h, 1.0)

    def construction(x: Vector) -> Vector:
        h = np.clip(np.asarray(x[:-1], dtype=float), 0.0, 1.0)
        for _ in range(20):  # put the integral back to exactly steps / 2 as far as floats allow
            gap = steps / 2 - h.sum()
            free = (h > 0) & (h < 1) if gap else np.zeros(steps, dtype=bool)
            if not free.any():
                break
            h[free] = np.clip(h[free] + gap / free.sum(), 0.0, 1.0)
        return np.asarray(h, dtype=float)

    return ContinuousForm("erdos_min_overlap", steps + 1, lambda x: float(x[-1]), start, construction,
                          "overlap_steps", "", inequalities=inequalities,
                          equalities=lambda x: np.array([np.sum(x[:-1]) - steps / 2]),
                          bounds=[(0.0, 1.0)] * steps + [(0.0, None)])


def form_of(name: str, settings: dict[str, Any], steps: int = 50) -> ContinuousForm | None:
    """The continuous form of the built-in problem ``name`` (``steps``: the step functions' length), or
    None (the catalog's ``no_continuous_form`` says why)."""
    if name.startswith("circle_packing"):
        return circle_packing(int(settings["n"]))
    if name == "heilbronn_triangle_11":
        return heilbronn_triangle(int(settings["n"]))
    if name.startswith("min_max_distance"):
        return min_max_distance(int(settings["n"]), int(settings["d"]))
    if name == "first_autocorrelation":
        return first_autocorrelation(steps)
    if name == "second_autocorrelation":
        return second_autocorrelation(steps)
    if name == "erdos_min_overlap":
        return erdos_overlap(steps)
    return None

"""llm4ad:circle_packing: place ``n`` disjoint circles in the unit square, maximizing the sum of radii.

``pack_circles(n)`` returns an ``(n, 3)`` array of ``[x, y, r]``.  Valid when every circle lies
inside the square and no two overlap, both up to ``TOLERANCE``: circles that touch exactly
(a grid with spacing 2r) are valid even though float rounding makes their distance a hair
below 2r; the original's strict check rejected its own template for that reason.
Score = sum of radii.  There is no randomness: the seed does not change the instance.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from trace_bench.tasks.llm4ad.evalkit import InvalidSolution, load_candidate
from trace_bench.tasks.llm4ad.problem import CodeTask, Run, build_problem

TOLERANCE = 1e-9

TEMPLATE = '''import numpy as np


def pack_circles(n):
    """Equal circles on a 6-column grid; neighbours in a row touch."""
    cols = 6
    rows = int(np.ceil(n / cols))
    r = 0.5 / max(cols, rows)
    circles = []
    for k in range(n):
        i, j = k % cols, k // cols
        circles.append([(2 * i + 1) * r, (2 * j + 1) * (0.5 / rows), r])
    return np.array(circles)
'''

ROWS = '''import numpy as np


def _max_radii(centers):
    """Grow radii one circle at a time until each touches a wall or a neighbour."""
    border = np.minimum.reduce([centers[:, 0], centers[:, 1], 1 - centers[:, 0], 1 - centers[:, 1]])
    d = np.sqrt(((centers[:, None] - centers[None]) ** 2).sum(-1))
    np.fill_diagonal(d, np.inf)
    r = np.zeros(len(centers))
    for _ in range(100):
        before = r.copy()
        for i in range(len(centers)):
            r[i] = max(0.0, min(border[i], (d[i] - r).min()))
        if np.allclose(before, r, atol=1e-15):
            break
    return r


def pack_circles(n):
    """Rows of different lengths (5, 5, 6, 5, 5 for n = 26) use the square better than a grid."""
    rows = max(1, int(round(np.sqrt(n))))
    counts = [n // rows] * rows
    for k in range(n - sum(counts)):
        counts[rows // 2 + (k + 1) // 2 * (-1) ** k] += 1
    centers = np.array([((i + 0.5) / c, (k + 0.5) / rows) for k, c in enumerate(counts) for i in range(c)])
    return np.column_stack([centers, _max_radii(centers)])
'''

PENALTY_DESCENT = '''import numpy as np


def _shrink_to_valid(x, r):
    border = np.minimum.reduce([x[:, 0], x[:, 1], 1 - x[:, 0], 1 - x[:, 1]])
    r = np.clip(r, 0, np.maximum(border, 0))
    d = np.sqrt(((x[:, None] - x[None]) ** 2).sum(-1))
    np.fill_diagonal(d, np.inf)
    for _ in range(10000):
        over = r[:, None] + r[None] - d
        i, j = np.unravel_index(np.argmax(over), over.shape)
        if over[i, j] <= 0:
            break
        scale = d[i, j] / (r[i] + r[j])
        r[i] *= scale
        r[j] *= scale
    return r


def pack_circles(n):
    """Start from rows of 6, 5, 5, 5, 5 and follow the gradient of sum(r) minus overlap penalties."""
    counts = [n - 4 * (n // 5)] + [n // 5] * 4
    x = np.array([((i + 0.5) / c, (k + 0.5) / 5) for k, c in enumerate(counts) for i in range(c)])
    r = np.full(n, 0.05)
    steps, lr = 4000, 0.001
    eye = np.eye(n)
    for t in range(steps):
        lam = 10 + 2000 * t / steps
        diff = x[:, None] - x[None]
        d = np.sqrt((diff ** 2).sum(-1)) + eye
        over = np.maximum(r[:, None] + r[None] - d, 0) * (1 - eye)
        low, high = np.maximum(r[:, None] - x, 0), np.maximum(x + r[:, None] - 1, 0)
        grad_r = 1 - lam * 2 * (over.sum(1) + low.sum(1) + high.sum(1))
        grad_x = lam * 2 * ((over[:, :, None] * diff / d[:, :, None]).sum(1) + low - high)
        r = np.maximum(r + lr * grad_r, 0)
        x = x + lr * grad_x
    x = np.clip(x, 0, 1)
    return np.column_stack([x, _shrink_to_valid(x, r)])
'''

TASK = CodeTask(
    name="circle_packing",
    entry="pack_circles",
    signature="(n: int) -> np.ndarray",
    description=("Circle packing: place n = 26 circles inside the unit square [0, 1] x [0, 1] without overlaps, "
                 "maximizing the sum of their radii. pack_circles(n) returns an array of shape (n, 3) with "
                 "rows [x, y, r]."),
    constraints=("Return an (n, 3) array of finite [x, y, r] with r >= 0; every circle inside the unit square "
                 "and no two overlapping (touching is fine, tolerance 1e-9)."),
    template=TEMPLATE,
    stub_candidates=(ROWS, PENALTY_DESCENT),
    evaluator=f"{__name__}:evaluate",
    scoring="sum of radii of a valid packing",
    defaults={"n_instances": 1, "n_circles": 26},
)


def check_packing(circles: Any, n: int, tol: float = TOLERANCE) -> np.ndarray:
    """The packing as an (n, 3) float array, or :class:`InvalidSolution` naming the first violation."""
    try:
        arr = np.asarray(circles, dtype=float)
    except (TypeError, ValueError) as exc:
        raise InvalidSolution(f"pack_circles must return numbers, got {type(circles).__name__}: {exc}") from exc
    if arr.shape != (n, 3):
        raise InvalidSolution(f"pack_circles({n}) must return shape ({n}, 3), got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise InvalidSolution("the packing contains NaN or infinite values")
    x, y, r = arr[:, 0], arr[:, 1], arr[:, 2]
    if np.any(r < 0):
        raise InvalidSolution(f"circle {int(np.argmin(r))} has a negative radius")
    outside = (x - r < -tol) | (y - r < -tol) | (x + r > 1 + tol) | (y + r > 1 + tol)
    if outside.any():
        i = int(np.argmax(outside))
        raise InvalidSolution(f"circle {i} at ({x[i]:.4f}, {y[i]:.4f}) with r={r[i]:.4f} leaves the unit square")
    dist = np.sqrt((x[:, None] - x[None]) ** 2 + (y[:, None] - y[None]) ** 2)
    overlap = r[:, None] + r[None] - dist
    np.fill_diagonal(overlap, -np.inf)
    if overlap.max() > tol:
        a, b = (int(k) for k in np.unravel_index(int(np.argmax(overlap)), overlap.shape))
        raise InvalidSolution(f"circles {a} and {b} overlap by {overlap[a, b]:.3g}")
    return arr


def solve(payload: dict[str, Any]) -> np.ndarray:
    """Sandbox target: the candidate's packing (checked here too, for quick feedback)."""
    pack = load_candidate(payload["program"], TASK.entry)
    n = int(payload["n_circles"])
    return check_packing(pack(n), n)


def evaluate(payload: dict[str, Any], run: Run) -> dict[str, Any]:
    """Trusted: check the packing again, outside the candidate's reach, and sum the radii."""
    n = int(payload["n_circles"])
    arr = check_packing(run(f"{__name__}:solve", payload), n)
    radii = arr[:, 2]
    total = float(radii.sum())
    smallest = np.argsort(radii)[:3]
    return {"score": total, "instance_scores": [total],
            "worst": "smallest circles: " + ", ".join(f"#{i} (r={radii[i]:.4f})" for i in smallest),
            "summary": f"Valid packing of {n} circles; sum of radii {total:.6f} (higher is better; "
                       f"the best known value for 26 circles is about 2.635)."}


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    return build_problem(TASK, eval_kwargs)

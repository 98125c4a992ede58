"""Anytime curves: best-so-far score against LLM calls, tokens, USD or wall time."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

AXES = {"llm_calls": "LLM calls", "tokens": "tokens", "usd": "USD", "wall_s": "wall time (s)", "step": "step"}


def job_curve(curves: pd.DataFrame, job_id: str, axis: str = "llm_calls") -> tuple[np.ndarray, np.ndarray]:
    rows = curves[curves["job_id"] == job_id].sort_values("step")
    x = pd.to_numeric(rows[axis], errors="coerce").to_numpy(float)
    y = pd.to_numeric(rows["best_score"], errors="coerce").to_numpy(float)
    return x, np.maximum.accumulate(np.where(np.isfinite(y), y, -np.inf)) if len(y) else y


def score_at(x: np.ndarray, y: np.ndarray, budget: float) -> float:
    """Best-so-far score when ``budget`` of the axis was spent (step function, carried forward)."""
    if len(x) == 0:
        return math.nan
    index = np.searchsorted(x, budget, side="right") - 1
    return float(y[max(index, 0)]) if index >= 0 else float(y[0])


def arm_curves(curves: pd.DataFrame, axis: str = "llm_calls", points: int = 40) -> pd.DataFrame:
    """Mean best-so-far per arm on a common grid of the axis (each job carried forward)."""
    if curves.empty:
        return pd.DataFrame(columns=["task", "trainer", "params_label", "x", "mean", "low", "high"])
    top = float(pd.to_numeric(curves[axis], errors="coerce").max() or 0.0)
    grid = np.linspace(0.0, top, points) if top > 0 else np.array([0.0])
    rows = []
    for (task, trainer, label), group in curves.groupby(["task", "trainer", "params_label"], sort=True):
        values = []
        for _job_id, job in group.groupby("job_id", sort=False):
            job = job.sort_values("step")
            x = pd.to_numeric(job[axis], errors="coerce").to_numpy(float)
            y = pd.to_numeric(job["best_score"], errors="coerce").to_numpy(float)
            y = np.maximum.accumulate(np.where(np.isfinite(y), y, -np.inf))
            index = np.clip(np.searchsorted(x, grid, side="right") - 1, 0, len(x) - 1)
            values.append(y[index])
        matrix = np.array(values)
        for i, g in enumerate(grid):
            column = matrix[:, i]
            column = column[np.isfinite(column)]
            if len(column) == 0:
                continue
            mean = float(column.mean())
            half = float(1.96 * column.std(ddof=1) / math.sqrt(len(column))) if len(column) > 1 else 0.0
            rows.append({"task": task, "trainer": trainer, "params_label": label, "x": float(g), "mean": mean,
                         "low": mean - half, "high": mean + half})
    return pd.DataFrame(rows)


def area_under_curve(x: np.ndarray, y: np.ndarray, budget: float) -> float:
    """Mean best-so-far score over [0, budget] (area under the step curve divided by the budget)."""
    if len(x) == 0 or budget <= 0:
        return math.nan
    edges = np.append(np.clip(x, 0, budget), budget)
    widths = np.diff(edges)
    return float(np.sum(widths * y) / budget)


def generalization_gap(jobs: pd.DataFrame) -> pd.DataFrame:
    """Best (selection) score minus test score per arm, where tasks have a test split."""
    scored = jobs[jobs["scored"] & jobs["score_test"].notna()]
    if scored.empty:
        return pd.DataFrame(columns=["task", "trainer", "params_label", "gap"])
    gap = (scored["score_best"] - scored["score_test"]).rename("gap")
    return scored.assign(gap=gap).groupby(["task", "trainer", "params_label"], as_index=False)["gap"].mean()

"""Anytime curves: the best score found so far against what was spent (LLM calls, tokens, USD, time).

A job's curve is a step function: after spending ``x`` its best-so-far score is the value of its last
curve point at or below ``x``, carried forward after the job ends (a finished job keeps its best).
Spend is the trainer's (curve.csv's ``llm_calls``/``tokens``/``usd``, what a budget counts); the
harness's measurement calls are not on these axes.  Every curve written since curve version 4 ends
with a row at the job's total trainer-phase spend (``kind`` final, harness_final or stop), so a
job that spent after its last report is drawn, and budgeted, at what it really spent.
Before its first point (the initial state, normally at zero spend) a job has no value.  Comparing
arms at equal spend (``score_at``) or over a whole budget (``job_auc``) is fairer than comparing
final scores of trainers that spend very differently.
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import stdtrit  # what t.ppf computes, without importing scipy.stats (0.5 s more)

from trace_bench.analysis.load import ARM, JOB_KEYS, SCORED_STATUSES
from trace_bench.store.models import CREDITED_CURVE_KINDS, SPEND_AXES

AXES = dict(SPEND_AXES)


def _job_columns(frame: pd.DataFrame) -> list[str]:
    """What identifies a job: run and job id (job ids alone when the frame covers one run)."""
    return [c for c in ("run_id", "job_id") if c in frame]


def _only_scored(curves: pd.DataFrame) -> pd.DataFrame:
    """Jobs that enter statistics; a frame without statuses (a live run's curves) is taken whole."""
    return curves[curves["status"].isin(SCORED_STATUSES)] if "status" in curves else curves


def best_so_far(curves: pd.DataFrame) -> pd.DataFrame:
    """Curve points ordered by job and step, with ``best_so_far``: the running maximum of
    ``best_score`` (``score`` where it is missing, on rows the trainer is credited with: never the
    harness's measurement after a stop), carried over points without a score."""
    ordered = curves.sort_values([*_job_columns(curves), "step"], kind="stable").reset_index(drop=True)
    value = ordered["best_score"]
    if "score" in ordered:
        score = ordered["score"]
        if "kind" in ordered:  # rows of older curves have no kind: all credited
            kind = ordered["kind"].fillna("").astype(str)
            score = score.where(kind.isin(CREDITED_CURVE_KINDS) | kind.isin(("", "nan")))
        value = value.fillna(score)
    by_job = [ordered[c] for c in _job_columns(ordered)]
    ordered["best_so_far"] = value.groupby(by_job).cummax().groupby(by_job).ffill()
    return ordered


def job_series(curves: pd.DataFrame, axis: str) -> Iterator[tuple[dict[str, Any], np.ndarray, np.ndarray]]:
    """(job keys, spend, best-so-far) per job; spend is made non-decreasing and points without a
    spend or a score are dropped.  Accepts the output of ``best_so_far`` to skip re-sorting."""
    if axis not in AXES and axis != "step":
        raise ValueError(f"unknown curve axis {axis!r}; choose one of {', '.join(AXES)} or step")
    ordered = curves if "best_so_far" in curves else best_so_far(curves)
    ordered = ordered[ordered[axis].notna() & ordered["best_so_far"].notna()]
    if ordered.empty:
        return
    codes = ordered.groupby(_job_columns(ordered), sort=False).ngroup().to_numpy()
    starts = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
    ends = np.r_[starts[1:], len(ordered)]
    spend = ordered[axis].to_numpy(float)
    best = ordered["best_so_far"].to_numpy(float)
    keys = ordered[[c for c in JOB_KEYS if c in ordered]].iloc[starts].to_dict("records")
    for job, start, end in zip(keys, starts, ends, strict=True):
        yield job, np.maximum.accumulate(spend[start:end]), best[start:end]


def step_value(x: np.ndarray, y: np.ndarray, at: np.ndarray | float) -> np.ndarray:
    """Value of the step function (x, y) at ``at``: the last y with x <= at, NaN before x[0]."""
    index = np.searchsorted(x, np.asarray(at, dtype=float), side="right") - 1
    return np.where(index >= 0, y[np.clip(index, 0, len(y) - 1)], np.nan)


def _grid(values: np.ndarray, points: int) -> np.ndarray:
    """The observed spends when there are few, else ``points`` evenly spaced from 0 to the largest."""
    unique = np.unique(values[np.isfinite(values)])
    if len(unique) <= points:
        return unique
    return np.linspace(min(0.0, float(unique[0])), float(unique[-1]), points)


def _arm_grid(task_grid: np.ndarray, end: float) -> np.ndarray:
    """The task's grid cut where the arm stops (its jobs' largest spend), that spend included: an arm
    that stopped early must end there on a chart, not run flat to the task's largest spend."""
    kept = task_grid[task_grid <= end]
    return kept if len(kept) and kept[-1] == end else np.r_[kept, end]


def arm_curves(curves: pd.DataFrame, axis: str = "llm_calls", points: int = 60,
               confidence: float = 0.95) -> pd.DataFrame:
    """Mean best-so-far per arm on a grid common to each task, with a Student-t interval over the
    jobs that have a value there (``n``); only scored jobs contribute.  An arm's curve ends at the
    largest spend of its jobs (a job that stopped before its arm's end holds its last best there).
    Accepts the output of ``best_so_far`` to skip re-sorting when several axes are drawn."""
    scored = _only_scored(curves)
    by_task: dict[str, list[tuple[dict[str, Any], np.ndarray, np.ndarray]]] = {}
    for item in job_series(scored, axis):
        by_task.setdefault(item[0]["task"], []).append(item)
    columns: dict[str, list[Any]] = {name: [] for name in [*ARM, "x", "n", "mean", "low", "high"]}
    for task, series in sorted(by_task.items()):
        task_grid = _grid(np.concatenate([x for _, x, _ in series]), points)
        by_arm: dict[tuple[str, str], list[tuple[np.ndarray, np.ndarray]]] = {}
        for keys, x, y in series:
            by_arm.setdefault((keys["trainer"], keys["params_label"]), []).append((x, y))
        for (trainer, label), jobs in sorted(by_arm.items()):
            grid = _arm_grid(task_grid, max(float(x[-1]) for x, _ in jobs))
            matrix = np.vstack([step_value(x, y, grid) for x, y in jobs])
            finite = np.isfinite(matrix)
            n = finite.sum(axis=0)
            filled = np.where(finite, matrix, 0.0)
            mean = np.divide(filled.sum(axis=0), n, out=np.full(len(grid), np.nan), where=n > 0)
            squares = np.where(finite, (matrix - mean) ** 2, 0.0).sum(axis=0)
            std = np.sqrt(np.divide(squares, n - 1, out=np.full(len(grid), np.nan), where=n > 1))
            quantile = stdtrit(np.maximum(n - 1, 1), 0.5 + confidence / 2)
            half = np.where(n > 1, quantile * std / np.sqrt(np.maximum(n, 1)), 0.0)
            keep = n > 0
            count = int(keep.sum())
            columns["task"] += [task] * count
            columns["trainer"] += [trainer] * count
            columns["params_label"] += [label] * count
            for name, values_at in (("x", grid), ("n", n), ("mean", mean), ("low", mean - half),
                                    ("high", mean + half)):
                columns[name].extend(values_at[keep].tolist())
    return pd.DataFrame(columns)


#: axes counted in whole units (one call, one token, one step); other axes are continuous
COUNT_AXES = ("llm_calls", "tokens", "step")
#: on a continuous axis (USD, seconds) the budget is cut into this many equal slices
CONTINUOUS_SLICES = 100


def axis_unit(axis: str, budget: float) -> float:
    """The unit of spend that AUC credits as a whole: one for a count axis, 1/100 of the budget
    for USD and wall time."""
    return 1.0 if axis in COUNT_AXES else budget / CONTINUOUS_SLICES


def area_under_curve(x: np.ndarray, y: np.ndarray, budget: float, unit: float = 1.0) -> float:
    """Mean best-so-far score over the budget, on the score's own scale (1.0 = the best score from
    the first unit of spend).  Each unit of spend ``(t - unit, t]`` up to ``budget`` is credited with
    the best score held once ``t`` was spent, so an improvement reached exactly at the budget counts
    for the last unit (a plain integral of the step function would give it zero width).  The
    initial state costs the trainer nothing: its score holds until the first improvement."""
    if len(x) == 0 or not budget > 0:
        return math.nan
    shifted = np.maximum(np.asarray(x, dtype=float) - unit, 0.0)
    edges = np.clip(np.r_[0.0, shifted[1:], budget], 0.0, budget)
    widths = np.diff(np.maximum.accumulate(edges))
    return float(np.sum(widths * y) / budget)


def _per_job(curves: pd.DataFrame, axis: str, column: str, budgets: dict[str, float] | float | None,
             reduce: str) -> pd.DataFrame:
    if isinstance(budgets, (int, float)):
        budgets = dict.fromkeys(curves["task"].unique(), float(budgets))
    elif budgets is None:
        budgets = {str(t): float(v) for t, v in curves.groupby("task")[axis].max().items()}
    rows = []
    for keys, x, y in job_series(curves, axis):
        budget = budgets.get(keys["task"], math.nan)
        if reduce == "auc":
            value = area_under_curve(x, y, budget, axis_unit(axis, budget))
        else:
            value = float(step_value(x, y, budget))
        rows.append({**keys, column: value, "budget": budget})
    frame = pd.DataFrame(rows, columns=[*(c for c in JOB_KEYS if c in curves), column, "budget"])
    frame["scored"] = frame[column].notna()
    if "status" in frame:
        frame["scored"] &= frame["status"].isin(SCORED_STATUSES)
    return frame


def score_at(curves: pd.DataFrame, axis: str, value: float) -> pd.DataFrame:
    """Equal-budget cut: per job, the best-so-far score once ``value`` of ``axis`` was spent (NaN when
    the job's first point lies beyond it).  Feed the result to ``arm_stats(frame, "score_at")``."""
    return _per_job(curves, axis, "score_at", value, "at")


def job_auc(curves: pd.DataFrame, axis: str = "llm_calls",
            budget: dict[str, float] | float | None = None) -> pd.DataFrame:
    """Per job, the budget-normalised area under its best-so-far curve (``area_under_curve``, one
    call/token/step or 1/100 of the budget as the unit).  The budget defaults, per task, to the
    largest spend any job of the task reached, so arms that stop early carry their best on."""
    return _per_job(curves, axis, "auc", budget, "auc")


def generalization_gap(jobs: pd.DataFrame, confidence: float = 0.95) -> pd.DataFrame:
    """Per arm with a test split: best score on the selection split minus test score of that same
    state (positive = the selected state looked better than it generalises), mean and t interval."""
    from trace_bench.analysis.stats import mean_ci

    columns = [*ARM, "selection_split", "count", "best_mean", "test_mean", "gap_mean", "gap_ci_half"]
    scored = jobs[jobs["scored"] & jobs["score_test"].notna()] if "score_test" in jobs else jobs.iloc[0:0]
    rows = []
    for key, group in scored.groupby(ARM, sort=True):
        gap = mean_ci(group["score_best"] - group["score_test"], confidence)
        split = ", ".join(sorted({str(s) for s in group["selection_split"] if s})) if "selection_split" in group \
            else ""
        rows.append([*key, split, gap.n, float(group["score_best"].mean()), float(group["score_test"].mean()),
                     gap.mean, gap.half_width])
    return pd.DataFrame(rows, columns=columns)

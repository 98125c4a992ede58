"""Statistics over seeds: per-arm means with Student-t intervals, and the leaderboard.

An *arm* is one (trainer, params variant) on one task (a task label: one task under one set of
eval_kwargs); its seeds are the replicates.  Only scored jobs (status ok or budget_exhausted, with a
best score) enter the numbers; the others are counted.  An arm with fewer scored seeds than it
planned is *incomplete* (``complete`` false, ``count`` of ``planned``) and ranks after every
complete arm of its task.  The paired tests and the win/tie/loss matrix are in :mod:`.pairs`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import stdtrit  # what t.ppf computes, without importing scipy.stats (0.5 s more)

from trace_bench.analysis.load import ARM, ran_jobs
from trace_bench.analysis.protocol import DEFAULT_METRIC
from trace_bench.store.leaderboard import ArmJob, leaderboard_rows
from trace_bench.store.models import LEADERBOARD_COLUMNS, Arm
from trace_bench.store.paired import ALPHA
from trace_bench.store.stats import ScoreRange, within
from trace_bench.store.status import Status

BOOTSTRAP_RESAMPLES = 2000


@dataclass(frozen=True)
class Interval:
    """Mean of a sample with its sample std and a two-sided confidence interval (NaN when n < 2)."""

    n: int
    mean: float
    std: float
    low: float
    high: float

    @property
    def half_width(self) -> float:
        return (self.high - self.low) / 2


def mean_ci(values: Any, confidence: float = 0.95, score_range: ScoreRange | None = None) -> Interval:
    """Student-t interval of the mean, cut to ``score_range`` (the range the scores are declared to
    lie in, :func:`trace_bench.store.stats.within`); non-finite values are dropped."""
    sample = np.asarray(values, dtype=float)
    sample = sample[np.isfinite(sample)]
    n = len(sample)
    if n == 0:
        return Interval(0, math.nan, math.nan, math.nan, math.nan)
    mean = float(sample.mean())
    if n == 1:
        return Interval(1, mean, math.nan, math.nan, math.nan)
    std = float(sample.std(ddof=1))
    half = float(stdtrit(n - 1, 0.5 + confidence / 2)) * std / math.sqrt(n)
    return Interval(n, mean, std, *within(mean - half, mean + half, score_range))


def task_ranges(jobs: pd.DataFrame) -> dict[str, ScoreRange]:
    """Per task, the score range its jobs recorded (results.csv ``score_range``), where declared."""
    if "score_range" not in jobs:
        return {}
    found: dict[str, ScoreRange] = {}
    for task, declared in zip(jobs["task"], jobs["score_range"], strict=True):
        if isinstance(declared, (list, tuple)) and len(declared) == 2 and str(task) not in found:
            found[str(task)] = (declared[0], declared[1])
    return found


def clip_to_ranges(frame: pd.DataFrame, ranges: dict[str, ScoreRange], low: str, high: str) -> pd.DataFrame:
    """``frame`` with the interval in columns ``low``/``high`` cut to each row's task range."""
    if not ranges or frame.empty:
        return frame
    frame = frame.copy()
    for index, task in frame["task"].items():
        bounds = ranges.get(str(task))
        if bounds is not None and pd.notna(frame.at[index, low]) and pd.notna(frame.at[index, high]):
            frame.at[index, low], frame.at[index, high] = within(float(frame.at[index, low]),
                                                                 float(frame.at[index, high]), bounds)
    return frame


def bootstrap_ci(values: Any, confidence: float = 0.95, resamples: int = BOOTSTRAP_RESAMPLES,
                 seed: int = 0) -> tuple[float, float]:
    """Percentile bootstrap interval of the mean (fixed seed, so a report is reproducible).  Makes no
    normality assumption, but is too narrow for n < 5: prefer the t interval there."""
    sample = np.asarray(values, dtype=float)
    sample = sample[np.isfinite(sample)]
    if len(sample) < 2:
        return math.nan, math.nan
    rng = np.random.default_rng(seed)
    means = sample[rng.integers(0, len(sample), size=(resamples, len(sample)))].mean(axis=1)
    tail = (1 - confidence) / 2 * 100
    low, high = np.percentile(means, [tail, 100 - tail])
    return float(low), float(high)


def _t_half_width(std: pd.Series, count: pd.Series, confidence: float) -> pd.Series:
    quantile = stdtrit(np.maximum(count.to_numpy(float) - 1, 1), 0.5 + confidence / 2)
    return (std * quantile / np.sqrt(count)).where(count > 1)


def arm_stats(jobs: pd.DataFrame, column: str = "score_best", confidence: float = 0.95,
              bootstrap: bool = False) -> pd.DataFrame:
    """One row per arm: ``count`` scored seeds, ``failed`` jobs left out, ``budget_exhausted`` jobs
    kept (flagged), mean/std/Student-t CI of ``column``, the test-split score where present, and the
    mean spend per job of every job that ran (failed ones spent too)."""
    if jobs.empty:
        return pd.DataFrame(columns=[*ARM, "suite", "count", "failed", "planned", "complete", "budget_exhausted",
                                     "mean", "std", "ci_low", "ci_high", "ci_half"])
    groups = jobs.groupby(ARM, sort=True)
    scored = jobs[jobs["scored"]].groupby(ARM, sort=True)
    frame = pd.DataFrame({"suite": groups["suite"].first() if "suite" in jobs else "",
                          "count": scored[column].count(), "failed": (~jobs["scored"]).groupby([jobs[c] for c in ARM]).sum(),
                          "budget_exhausted": (jobs["scored"] & (jobs["status"] == Status.BUDGET_EXHAUSTED.value))
                          .groupby([jobs[c] for c in ARM]).sum(),
                          "mean": scored[column].mean(), "std": scored[column].std(ddof=1)})
    frame[["count", "failed", "budget_exhausted"]] = frame[["count", "failed", "budget_exhausted"]].fillna(0) \
        .astype(int)
    frame.insert(frame.columns.get_loc("failed") + 1, "planned", _planned(jobs, frame.index))
    frame.insert(frame.columns.get_loc("planned") + 1, "complete",
                 (frame["count"] == frame["planned"]) & (frame["planned"] > 0))
    frame["ci_half"] = _t_half_width(frame["std"], frame["count"], confidence)
    frame["ci_low"], frame["ci_high"] = frame["mean"] - frame["ci_half"], frame["mean"] + frame["ci_half"]
    frame["no_variance"] = (frame["count"] >= 2) & (frame["std"].fillna(1.0) <= 1e-9)
    if bootstrap:
        bounds = {key: bootstrap_ci(group[column], confidence) for key, group in scored}
        frame["boot_low"] = [bounds.get(key, (math.nan, math.nan))[0] for key in frame.index]
        frame["boot_high"] = [bounds.get(key, (math.nan, math.nan))[1] for key in frame.index]
    for prefix, source in (("test", "score_test_best" if "score_test_best" in jobs else "score_test"),
                           ("test_last", "score_test_last")):
        if source in jobs:
            frame[f"{prefix}_count"] = scored[source].count().reindex(frame.index).fillna(0).astype(int)
            frame[f"{prefix}_mean"], frame[f"{prefix}_std"] = scored[source].mean(), scored[source].std(ddof=1)
            frame[f"{prefix}_ci_half"] = _t_half_width(frame[f"{prefix}_std"], frame[f"{prefix}_count"], confidence)
    if "score_initial" in jobs:
        frame["initial_mean"] = scored["score_initial"].mean()
    spent = ran_jobs(jobs).groupby(ARM, sort=True)
    for name, source in (("llm_calls", "llm_calls"), ("tokens", "total_tokens"), ("cost_usd", "cost_usd"),
                         ("time_s", "time_seconds")):
        if source in jobs:
            frame[name] = spent[source].mean()
    return clip_to_ranges(frame.reset_index(), task_ranges(jobs), "ci_low", "ci_high")


def _planned(jobs: pd.DataFrame, index: pd.Index) -> pd.Series:
    """Seeds each arm planned: per run, the arm's ``planned`` (from the run's manifest), summed over
    the runs pooled into the arm; at least the arm's rows."""
    rows = jobs.groupby(ARM, sort=True).size()
    if "planned" not in jobs:
        return rows.reindex(index).fillna(0).astype(int)
    keys = [*ARM, "run_id"] if "run_id" in jobs else ARM
    per_run = jobs.groupby(keys, sort=True)["planned"].max().groupby(level=list(range(len(ARM)))).sum()
    return pd.concat([per_run, rows], axis=1).max(axis=1).reindex(index).fillna(0).astype(int)


def arm_planned(arm: pd.DataFrame) -> int:
    """Seeds one arm's rows planned: per run, its manifest's count (``planned``), summed over the runs
    pooled into the arm; at least its rows (older runs, or a frame without ``planned``)."""
    if "planned" not in arm or "run_id" not in arm:
        return len(arm)
    return max(len(arm), int(arm.groupby("run_id")["planned"].max().sum()))


def incomplete_note(count: int, planned: int) -> str:
    """The mark an incomplete arm carries in every table (empty for a complete one)."""
    return "" if count == planned > 0 else f"incomplete: {count}/{planned} seeds"


def leaderboard(jobs: pd.DataFrame, metric: str = DEFAULT_METRIC, alpha: float = ALPHA) -> pd.DataFrame:
    """The rows of leaderboard.csv for these jobs, built by the driver's own function
    (:func:`trace_bench.store.leaderboard.leaderboard_rows`) so every leaderboard ranks alike: per task,
    the ``metric`` (a held-out test score where the task has one, else the selection split's best),
    ranks from the verdict's paired test (ties share a rank), intervals inside the score's range.
    Columns: :data:`~trace_bench.store.models.LEADERBOARD_COLUMNS`."""
    arms: dict[Arm, list[ArmJob]] = {}
    planned: dict[Arm, int] = {}
    for (task, trainer, label), group in jobs.groupby(ARM, sort=True):
        key = Arm(str(task), str(trainer), str(label))
        arms[key] = [_arm_job(row) for row in group.to_dict("records")]
        planned[key] = arm_planned(group)
    rows = [row.model_dump(include=set(LEADERBOARD_COLUMNS)) for row in leaderboard_rows(arms, planned, metric, alpha)]
    frame = pd.DataFrame(rows, columns=list(LEADERBOARD_COLUMNS))
    frame["rank"] = frame["rank"].astype("Int64")
    return frame


def _arm_job(row: dict[str, Any]) -> ArmJob:
    """A jobs-frame row as the leaderboard builder takes it (NaN read as missing)."""
    def number(name: str) -> float | None:
        value = row.get(name)
        return None if value is None or (isinstance(value, float) and math.isnan(value)) else float(value)

    declared = row.get("score_range")
    return ArmJob(int(row["seed"]), str(row.get("suite") or ""), bool(row["scored"]), bool(row.get("ran", True)),
                  number("score_best"), number("score_test_best"), number("score_test_last"), number("score_initial"),
                  number("llm_calls") or 0.0, number("total_tokens") or 0.0, number("cost_usd") or 0.0,
                  (declared[0], declared[1]) if isinstance(declared, (list, tuple)) and len(declared) == 2 else None,
                  str(row.get("mode") or ""), number("budget_used"), _text(row.get("under_spent_reason")))


def _text(value: Any) -> str:
    return "" if value is None or (isinstance(value, float) and math.isnan(value)) else str(value)

"""Statistics over seeds: means with Student-t intervals, paired tests, win/tie/loss."""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

ARM = ["task", "trainer", "params_label"]


def mean_ci(values: np.ndarray, confidence: float = 0.95) -> tuple[float, float, float, float]:
    """(mean, std, low, high) of a sample; the interval is Student-t (NaN for n < 2)."""
    values = np.asarray(values, dtype=float)
    values = values[np.isfinite(values)]
    n = len(values)
    if n == 0:
        return math.nan, math.nan, math.nan, math.nan
    mean = float(values.mean())
    if n == 1:
        return mean, math.nan, math.nan, math.nan
    std = float(values.std(ddof=1))
    half = float(stats.t.ppf(0.5 + confidence / 2, n - 1)) * std / math.sqrt(n)
    return mean, std, mean - half, mean + half


def per_arm(jobs: pd.DataFrame, column: str = "score_best") -> pd.DataFrame:
    """Mean, std, 95 % CI and counts of ``column`` per (task, trainer, params_label)."""
    rows = []
    for key, group in jobs.groupby(ARM, sort=True):
        scored = group[group["scored"]]
        mean, std, low, high = mean_ci(scored[column].to_numpy())
        rows.append({**dict(zip(ARM, key, strict=True)), "n": len(scored), "failed": int((~group["scored"]).sum()),
                     "mean": mean, "std": std, "ci_low": low, "ci_high": high,
                     "mean_initial": scored["score_initial"].mean(), "mean_test": scored["score_test"].mean(),
                     "llm_calls": scored["llm_calls"].mean(), "tokens": scored["total_tokens"].mean(),
                     "cost_usd": scored["cost_usd"].mean(), "time_s": scored["time_seconds"].mean()})
    return pd.DataFrame(rows)


def leaderboard(jobs: pd.DataFrame) -> pd.DataFrame:
    arms = per_arm(jobs)
    if arms.empty:
        return arms
    arms["rank"] = arms.groupby("task")["mean"].rank(method="min", ascending=False)
    return arms.sort_values(["task", "rank", "trainer"], na_position="last").reset_index(drop=True)


@dataclass
class Paired:
    n: int
    mean_diff: float
    ci_low: float
    ci_high: float
    p_value: float
    wins: int
    ties: int
    losses: int


def paired_test(a: np.ndarray, b: np.ndarray, tolerance: float = 1e-9) -> Paired:
    """a - b over paired seeds: mean difference, t interval and a Wilcoxon signed-rank p-value."""
    diff = np.asarray(a, float) - np.asarray(b, float)
    diff = diff[np.isfinite(diff)]
    n = len(diff)
    wins, losses = int((diff > tolerance).sum()), int((diff < -tolerance).sum())
    ties = n - wins - losses
    if n == 0:
        return Paired(0, math.nan, math.nan, math.nan, math.nan, 0, 0, 0)
    mean, _, low, high = mean_ci(diff)
    nonzero = diff[np.abs(diff) > tolerance]
    if len(nonzero) == 0:
        p_value = 1.0
    else:
        p_value = float(stats.wilcoxon(nonzero, zero_method="wilcox", alternative="two-sided").pvalue)
    return Paired(n, mean, low, high, p_value, wins, ties, losses)


def holm(p_values: list[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values (same order as given)."""
    order = sorted(range(len(p_values)), key=lambda i: (math.isnan(p_values[i]), p_values[i]))
    adjusted = [math.nan] * len(p_values)
    running = 0.0
    m = sum(not math.isnan(p) for p in p_values)
    for rank, index in enumerate(order):
        p = p_values[index]
        if math.isnan(p):
            continue
        running = max(running, min(1.0, (m - rank) * p))
        adjusted[index] = running
    return adjusted


def win_matrix(jobs: pd.DataFrame, alpha: float = 0.05) -> pd.DataFrame:
    """For every ordered pair of arms (trainer, params) and every task: paired test over seeds;
    returns per pair the wins/ties/losses across tasks (significant after Holm correction)."""
    scored = jobs[jobs["scored"]]
    arms = sorted({(t, p) for t, p in zip(scored["trainer"], scored["params_label"], strict=True)})
    rows = []
    for a in arms:
        for b in arms:
            if a == b:
                continue
            tests = []
            for _task, group in scored.groupby("task"):
                left = group[(group["trainer"] == a[0]) & (group["params_label"] == a[1])].set_index("seed")
                right = group[(group["trainer"] == b[0]) & (group["params_label"] == b[1])].set_index("seed")
                seeds = left.index.intersection(right.index)
                if len(seeds) == 0:
                    continue
                tests.append(paired_test(left.loc[seeds, "score_best"].to_numpy(),
                                         right.loc[seeds, "score_best"].to_numpy()))
            adjusted = holm([t.p_value for t in tests])
            win = sum(1 for t, p in zip(tests, adjusted, strict=True) if t.mean_diff > 0 and p < alpha)
            loss = sum(1 for t, p in zip(tests, adjusted, strict=True) if t.mean_diff < 0 and p < alpha)
            rows.append({"arm": f"{a[0]} ({a[1]})", "versus": f"{b[0]} ({b[1]})", "tasks": len(tests),
                         "wins": win, "losses": loss, "ties": len(tests) - win - loss})
    return pd.DataFrame(rows)

"""Statistics over seeds: per-arm means with Student-t intervals, leaderboards, paired tests.

An *arm* is one (trainer, params variant) on one task (a task label: one task under one set of
eval_kwargs); its seeds are the replicates.  Only scored jobs (status ok or budget_exhausted, with a
best score) enter the numbers; the others are counted.  An arm with fewer scored seeds than it
planned is *incomplete* (``complete`` false, ``count`` of ``planned``) and ranks after every
complete arm of its task.  Paired tests pair two arms' jobs by seed, only seeds both arms completed
(``dropped`` counts the others), which removes the task-instance variance that seeds share (same
data split, same initial state), so small seed counts still detect real differences; the
win/tie/loss matrix aggregates them over tasks.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.special import stdtrit  # what t.ppf computes, without importing scipy.stats (0.5 s more)

from trace_bench.analysis.load import ARM, ran_jobs
from trace_bench.analysis.protocol import DEFAULT_METRIC, RANK_METRIC, RANK_SCORE, with_rank_score
from trace_bench.store.models import arm_label
from trace_bench.store.ranking import TIE_TOLERANCE, arm_ranks
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


def mean_ci(values: Any, confidence: float = 0.95) -> Interval:
    """Student-t interval of the mean; non-finite values are dropped."""
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
    return Interval(n, mean, std, mean - half, mean + half)


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
    return frame.reset_index()


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


def leaderboard(jobs: pd.DataFrame, confidence: float = 0.95, metric: str = DEFAULT_METRIC) -> pd.DataFrame:
    """Per task, arms ranked by the mean of the task's ranking metric (``metric``, a held-out test
    score, where the task has one, else the best selection score, see :mod:`.protocol`; column
    ``metric`` names it): rank 1 is best, equal means (to 1e-9) share the lowest rank, arms with no
    scored seed come last without a rank; an incomplete arm (failed or missing seeds) ranks after
    every complete arm of its task."""
    ranked = with_rank_score(jobs, metric)
    arms = arm_stats(ranked, column=RANK_SCORE, confidence=confidence)
    if arms.empty:
        return pd.DataFrame(columns=["task", "rank", "trainer", "params_label", "metric", "count", "failed", "planned",
                                     "complete", "mean", "std", "ci_low", "ci_high"])
    chosen = ranked.groupby("task")[RANK_METRIC].first()
    arms["metric"] = arms["task"].map(chosen)
    arms["rank"] = pd.array([None] * len(arms), dtype="Int64")
    for _, index in arms.groupby("task").groups.items():
        means = [None if pd.isna(v) else float(v) for v in arms.loc[index, "mean"]]
        arms.loc[index, "rank"] = pd.array(arm_ranks(means, list(arms.loc[index, "complete"])), dtype="Int64")
    first = ["task", "rank", "trainer", "params_label", "metric", "count", "failed", "planned", "complete", "mean",
             "std", "ci_low", "ci_high"]
    arms = arms[first + [c for c in arms.columns if c not in first]]
    return arms.sort_values(["task", "rank", "trainer", "params_label"], na_position="last").reset_index(drop=True)


@dataclass(frozen=True)
class PairedTest:
    """A − B over seeds present in both arms.  ``ci_*`` is the t interval of the mean difference,
    ``boot_*`` the paired bootstrap interval and ``boot_p`` its two-sided p-value; ``p_value`` is
    Wilcoxon's signed-rank test.  Wins/ties/losses count seeds (tie: |difference| <= tolerance)."""

    n: int
    mean_diff: float
    ci_low: float
    ci_high: float
    p_value: float
    boot_low: float
    boot_high: float
    boot_p: float
    wins: int
    ties: int
    losses: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def paired_test(a: Any, b: Any, tolerance: float = TIE_TOLERANCE, confidence: float = 0.95,
                resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> PairedTest:
    """Paired comparison of two equally long score arrays (pairs with a missing score are dropped)."""
    return paired_tests([(a, b)], tolerance, confidence, resamples, seed)[0]


def paired_tests(pairs: Sequence[tuple[Any, Any]], tolerance: float = TIE_TOLERANCE, confidence: float = 0.95,
                 resamples: int = BOOTSTRAP_RESAMPLES, seed: int = 0) -> list[PairedTest]:
    """``paired_test`` for many (a, b) pairs at once; the Wilcoxon p-values are computed in batches
    (one scipy call per sample size), which matters for the win matrix of a large run."""
    diffs = []
    for a, b in pairs:
        diff = np.asarray(a, dtype=float) - np.asarray(b, dtype=float)
        diff = diff[np.isfinite(diff)]
        diffs.append(np.where(np.abs(diff) <= tolerance, 0.0, diff))
    results = []
    for diff, p_value in zip(diffs, wilcoxon_p_values(diffs), strict=True):
        n = len(diff)
        if n == 0:
            results.append(PairedTest(0, *[math.nan] * 7, 0, 0, 0))  # type: ignore[arg-type]
            continue
        wins, losses = int((diff > 0).sum()), int((diff < 0).sum())
        interval = mean_ci(diff, confidence)
        boot_low, boot_high = bootstrap_ci(diff, confidence, resamples, seed)
        results.append(PairedTest(n, interval.mean, interval.low, interval.high, p_value, boot_low, boot_high,
                                  _bootstrap_p(diff, resamples, seed), wins, n - wins - losses, losses))
    return results


def wilcoxon_p_values(diffs: Sequence[np.ndarray]) -> list[float]:
    """Two-sided signed-rank p-values of paired differences (ties already set to 0).  Zero differences
    are dropped (Wilcoxon's own treatment); all zero means no evidence of a difference, p = 1; none
    at all, NaN.  The null distribution is exact up to 50 pairs without tied magnitudes (the usual
    seed counts), normal-approximated with tie correction beyond."""
    from scipy import stats  # only the tables and reports that test pairs load it

    p_values = [math.nan if len(d) == 0 else 1.0 for d in diffs]
    exact: dict[int, list[int]] = {}
    for index, diff in enumerate(diffs):
        nonzero = diff[diff != 0]
        if len(nonzero) == 0:
            continue
        if len(nonzero) <= 50 and len(np.unique(np.abs(nonzero))) == len(nonzero):
            exact.setdefault(len(nonzero), []).append(index)
        else:
            p_values[index] = float(stats.wilcoxon(nonzero, method="auto").pvalue)
    for indices in exact.values():
        batch = np.vstack([diffs[i][diffs[i] != 0] for i in indices])
        for index, p_value in zip(indices, np.atleast_1d(stats.wilcoxon(batch, axis=1, method="exact").pvalue),
                                  strict=True):
            p_values[index] = float(p_value)
    return p_values


def _bootstrap_p(diff: np.ndarray, resamples: int, seed: int) -> float:
    """Share of resampled means at least as far from the observed mean as the observed mean is from
    zero (the bootstrap distribution shifted to the null)."""
    if len(diff) < 2 or not np.any(diff):
        return 1.0
    rng = np.random.default_rng(seed)
    means = diff[rng.integers(0, len(diff), size=(resamples, len(diff)))].mean(axis=1)
    observed = diff.mean()
    return float(min(1.0, (np.sum(np.abs(means - observed) >= abs(observed)) + 1) / (resamples + 1)))


def holm(p_values: list[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, same order as given; NaN stays NaN and is not counted."""
    finite = [i for i, p in enumerate(p_values) if not math.isnan(p)]
    order = sorted(finite, key=lambda i: p_values[i])
    adjusted = [math.nan] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(order) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


# Win/tie/loss across tasks.  Every pair of arms is tested per task, paired by seed, and the p-values
# of all those tests (every task, every pair) are Holm-corrected together, so the whole matrix keeps
# a family-wise error of alpha however many tasks and arms the run has.  A task is a win (loss) when
# A's mean paired difference is positive (negative) and the corrected p-value is below alpha;
# otherwise a tie.

ARM_PAIR_COLUMNS = ["task", "arm_a", "arm_b", "n", "dropped", "mean_diff", "ci_low", "ci_high", "p_value", "p_holm",
                    "boot_low", "boot_high", "boot_p", "wins", "ties", "losses", "outcome"]


def paired_samples(jobs: pd.DataFrame, column: str = "score_best") -> Iterator[tuple[str, str, str, np.ndarray,
                                                                                  np.ndarray]]:
    """Per task and unordered pair of arms (``arm_a`` < ``arm_b``, by :func:`arm_label`), the scores
    in ``column`` of the scored seeds both arms have, paired by seed: (task, arm_a, arm_b, a, b).
    Only seeds both arms completed are paired (:func:`seeds_run` says which others either arm ran).
    Pairs that share no scored seed are left out.  Every paired statistic (the tests, the power
    analysis) pairs through here, so they always compare the same seeds."""
    scored = jobs[jobs["scored"]]
    if scored.empty:
        return
    labelled = scored.assign(arm=[arm_label(t, p) for t, p in zip(scored["trainer"], scored["params_label"],
                                                                    strict=True)])
    for task, group in labelled.groupby("task", sort=True):
        table = group.pivot_table(index="seed", columns="arm", values=column, aggfunc="mean").sort_index(axis=1)
        values = table.to_numpy(float)
        for (i, arm_a), (j, arm_b) in itertools.combinations(enumerate(table.columns), 2):
            both = np.isfinite(values[:, i]) & np.isfinite(values[:, j])
            if both.any():
                yield str(task), str(arm_a), str(arm_b), values[both, i], values[both, j]


def seeds_run(jobs: pd.DataFrame) -> dict[tuple[str, str], set[int]]:
    """Per (task, arm label), every seed the arm has a job for, whatever its status."""
    found: dict[tuple[str, str], set[int]] = {}
    for task, trainer, label, seed in zip(jobs["task"], jobs["trainer"], jobs["params_label"], jobs["seed"],
                                          strict=True):
        found.setdefault((str(task), arm_label(trainer, label)), set()).add(int(seed))
    return found


def dropped_seeds(ran: dict[tuple[str, str], set[int]], task: str, arm_a: str, arm_b: str, paired: int) -> int:
    """Seeds either arm ran (:func:`seeds_run`) that a pairing of ``paired`` seeds left out, because
    the other arm's job failed or is missing: what every paired output reports as ``dropped``."""
    return len(ran.get((task, arm_a), set()) | ran.get((task, arm_b), set())) - paired


def pairwise_tests(jobs: pd.DataFrame, column: str = "score_best", alpha: float = 0.05,
                   tolerance: float = TIE_TOLERANCE) -> pd.DataFrame:
    """One row per task and unordered pair of arms (``arm_a`` < ``arm_b``) with the paired test of
    A − B over the seeds both arms completed (``dropped``: seeds either arm ran that are not paired,
    because the other arm's job failed or is missing), the p-value Holm-corrected over every row of
    the table (every task, every pair: one family), and the outcome for A."""
    ran = seeds_run(jobs)
    cells, pairs = [], []
    for task, arm_a, arm_b, a, b in paired_samples(jobs, column):
        dropped = dropped_seeds(ran, task, arm_a, arm_b, len(a))
        cells.append({"task": task, "arm_a": arm_a, "arm_b": arm_b, "dropped": dropped})
        pairs.append((a, b))
    if not cells:
        return pd.DataFrame(columns=ARM_PAIR_COLUMNS)
    rows = [{**cell, **test.as_dict()} for cell, test in zip(cells, paired_tests(pairs, tolerance), strict=True)]
    frame = pd.DataFrame(rows, columns=[c for c in ARM_PAIR_COLUMNS if c not in ("p_holm", "outcome")])
    frame["p_holm"] = holm(frame["p_value"].tolist())
    significant = frame["p_holm"] < alpha
    frame["outcome"] = "tie"
    frame.loc[significant & (frame["mean_diff"] > 0), "outcome"] = "win"
    frame.loc[significant & (frame["mean_diff"] < 0), "outcome"] = "loss"
    return frame[ARM_PAIR_COLUMNS]


def win_matrix(jobs: pd.DataFrame, column: str = "score_best", alpha: float = 0.05,
               tests: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per ordered pair of arms: tasks compared, tasks won, tied and lost by ``arm`` against
    ``versus``, and the seeds left unpaired over those tasks (``dropped``: a failed or missing job on
    either side), built from ``pairwise_tests`` (pass its result as ``tests`` to avoid recomputing)."""
    if tests is None:
        tests = pairwise_tests(jobs, column, alpha)
    rows = []
    for (arm_a, arm_b), group in tests.groupby(["arm_a", "arm_b"], sort=True):
        counts = group["outcome"].value_counts()
        won, tied, lost = (int(counts.get(k, 0)) for k in ("win", "tie", "loss"))
        dropped = int(group["dropped"].sum()) if "dropped" in group else 0
        rows.append({"arm": arm_a, "versus": arm_b, "tasks": len(group), "wins": won, "ties": tied, "losses": lost,
                     "dropped": dropped})
        rows.append({"arm": arm_b, "versus": arm_a, "tasks": len(group), "wins": lost, "ties": tied,
                     "losses": won, "dropped": dropped})
    frame = pd.DataFrame(rows, columns=["arm", "versus", "tasks", "wins", "ties", "losses", "dropped"])
    return frame.sort_values(["arm", "versus"]).reset_index(drop=True)

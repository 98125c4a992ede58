"""Arms compared in pairs, per task, with the verdict's paired test (:mod:`trace_bench.store.paired`).

Two arms of one task are paired by seed, over the seeds both scored (``dropped`` counts the seeds
either arm ran that are not paired: the other arm's job failed or is missing), which removes what the
seeds share (data split, initial state).  The test is the paired t-test, its p-values Holm-corrected
over every pair of the task's arms (one family per task), decided at alpha: the same decisions rank
the leaderboard, so a pair ``tied`` here shares a rank there.  The win/tie/loss matrix counts those
decisions over tasks.
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

from trace_bench.store.models import arm_label
from trace_bench.store.paired import ALPHA, PairedDifference, decide_pairs, holm, paired_difference
from trace_bench.store.ranking import TIE_TOLERANCE

ARM_PAIR_COLUMNS = ["task", "arm_a", "arm_b", "n", "dropped", "mean_diff", "sd_diff", "ci_low", "ci_high", "statistic",
                    "p_value", "p_holm", "no_variance", "wins", "ties", "losses", "outcome"]


@dataclass(frozen=True)
class PairedTest:
    """A − B over the seeds both arms scored: the verdict's paired t-test (``p_value``, raw;
    ``no_variance`` when every seed gave the same nonzero difference, then ``p_value`` is the exact
    sign-flip 2 / 2^n) and the Student-t 95 % interval of the mean difference (``ci_*``, NaN below two
    pairs).  Wins/ties/losses count seeds (tie: |difference| <= tolerance)."""

    n: int
    mean_diff: float
    sd_diff: float
    ci_low: float
    ci_high: float
    statistic: float
    p_value: float
    no_variance: bool
    wins: int
    ties: int
    losses: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _with_interval(test: PairedDifference, confidence: float) -> PairedTest:
    half = math.nan
    if test.n >= 2 and math.isfinite(test.sd_diff):
        half = float(stdtrit(test.n - 1, 0.5 + confidence / 2)) * test.sd_diff / math.sqrt(test.n)
    return PairedTest(test.n, test.mean_diff, test.sd_diff, test.mean_diff - half, test.mean_diff + half,
                      test.statistic, test.p_value, test.no_variance, test.wins, test.ties, test.losses)


def paired_test(a: Any, b: Any, tolerance: float = TIE_TOLERANCE, confidence: float = 0.95) -> PairedTest:
    """The paired test of two equally long score arrays (pairs with a missing score are dropped)."""
    return _with_interval(paired_difference(list(np.asarray(a, float)), list(np.asarray(b, float)), tolerance),
                          confidence)


def paired_tests(pairs: Sequence[tuple[Any, Any]], tolerance: float = TIE_TOLERANCE,
                 confidence: float = 0.95) -> list[PairedTest]:
    """:func:`paired_test` of many (a, b) pairs."""
    return [paired_test(a, b, tolerance, confidence) for a, b in pairs]


def paired_samples(jobs: pd.DataFrame, column: str = "score_best") -> Iterator[tuple[str, str, str, np.ndarray,
                                                                                  np.ndarray]]:
    """Per task and unordered pair of arms (``arm_a`` < ``arm_b``, by :func:`arm_label`), the scores
    in ``column`` of the scored seeds both arms have, paired by seed: (task, arm_a, arm_b, a, b).
    Pairs that share no scored seed are left out.  Every paired statistic pairs through here or
    through :func:`task_scores`, so they always compare the same seeds."""
    for task, scores in task_scores(jobs, column).items():
        for arm_a, arm_b in itertools.combinations(sorted(scores), 2):
            seeds = sorted(set(scores[arm_a]) & set(scores[arm_b]))
            if seeds:
                yield task, arm_a, arm_b, np.array([scores[arm_a][s] for s in seeds]), \
                    np.array([scores[arm_b][s] for s in seeds])


def task_scores(jobs: pd.DataFrame, column: str) -> dict[str, dict[str, dict[int, float]]]:
    """{task: {arm label: {seed: score}}} of the scored jobs with a finite ``column`` (what
    :func:`trace_bench.store.paired.decide_pairs` takes)."""
    scored = jobs[jobs["scored"] & jobs[column].notna()] if column in jobs else jobs.iloc[0:0]
    found: dict[str, dict[str, dict[int, float]]] = {}
    for task, trainer, label, seed, value in zip(scored["task"], scored["trainer"], scored["params_label"],
                                                 scored["seed"], scored[column].astype(float), strict=True):
        if math.isfinite(value):
            found.setdefault(str(task), {}).setdefault(arm_label(trainer, label), {})[int(seed)] = float(value)
    return {task: dict(sorted(arms.items())) for task, arms in sorted(found.items())}


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


def pairwise_tests(jobs: pd.DataFrame, column: str = "score_best", alpha: float = ALPHA,
                   tolerance: float = TIE_TOLERANCE) -> pd.DataFrame:
    """One row per task and unordered pair of arms (``arm_a`` < ``arm_b``) that share a scored seed:
    the paired test of A − B, its p-value Holm-corrected over the task's pairs (the leaderboard's
    family), and the outcome for A (``better``, ``worse`` or ``tied``)."""
    ran = seeds_run(jobs)
    rows = []
    for task, scores in task_scores(jobs, column).items():
        for decision in decide_pairs(scores, alpha, tolerance):
            if decision.difference.n == 0:
                continue
            test = _with_interval(decision.difference, 0.95)
            rows.append({"task": task, "arm_a": decision.arm_a, "arm_b": decision.arm_b,
                         "dropped": dropped_seeds(ran, task, decision.arm_a, decision.arm_b, test.n),
                         **test.as_dict(), "p_holm": decision.p_holm, "outcome": decision.outcome})
    return pd.DataFrame(rows, columns=ARM_PAIR_COLUMNS)


def win_matrix(jobs: pd.DataFrame, column: str = "score_best", alpha: float = ALPHA,
               tests: pd.DataFrame | None = None) -> pd.DataFrame:
    """Per ordered pair of arms: tasks compared, tasks won, tied and lost by ``arm`` against
    ``versus`` (the verdict's decisions, :func:`pairwise_tests`; pass its result as ``tests`` to avoid
    recomputing), and the seeds left unpaired over those tasks."""
    if tests is None:
        tests = pairwise_tests(jobs, column, alpha)
    rows = []
    for (arm_a, arm_b), group in tests.groupby(["arm_a", "arm_b"], sort=True):
        counts = group["outcome"].value_counts()
        won, tied, lost = (int(counts.get(k, 0)) for k in ("better", "tied", "worse"))
        dropped = int(group["dropped"].sum()) if "dropped" in group else 0
        rows.append({"arm": arm_a, "versus": arm_b, "tasks": len(group), "wins": won, "ties": tied, "losses": lost,
                     "dropped": dropped})
        rows.append({"arm": arm_b, "versus": arm_a, "tasks": len(group), "wins": lost, "ties": tied,
                     "losses": won, "dropped": dropped})
    frame = pd.DataFrame(rows, columns=["arm", "versus", "tasks", "wins", "ties", "losses", "dropped"])
    return frame.sort_values(["arm", "versus"]).reset_index(drop=True)


__all__ = ["ARM_PAIR_COLUMNS", "PairedTest", "dropped_seeds", "holm", "paired_samples", "paired_test", "paired_tests",
           "pairwise_tests", "seeds_run", "task_scores", "win_matrix"]

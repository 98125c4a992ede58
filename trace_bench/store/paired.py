"""The verdict's paired test: is one arm better than another on one task, over the seeds both scored?

Every conclusion about two arms of one task (the leaderboard's ranks, ``trace-bench table``,
report.html, the UI, ``compare``, ``power`` and the racing of seeds) comes from :func:`decide_pairs`:

* **pairing**: arm A's score on seed k against arm B's on seed k, over the seeds both scored (the
  seed fixes the data split and the initial state, so the pairing removes what the two share);
  differences within :data:`~trace_bench.store.ranking.TIE_TOLERANCE` count as 0;
* **test**: Student's paired t-test, two-sided, t = mean(d) / (sd(d) / sqrt(n)) with n - 1 degrees of
  freedom.  It is the test that can decide with the few seeds LLM-optimizer experiments afford: an
  exact rank or sign-flip test cannot reach p < 0.05 below six seeds (its smallest two-sided p is
  2 / 2^n, 0.25 with three), while the t-test trades that for the assumption that the differences are
  roughly normal (Colas et al. 2019 found it the best-behaved of the usual tests at small n);
* **no variance between seeds**: when every seed gives the same nonzero difference (deterministic
  arms, coarse scores) the t statistic has no estimate of the noise and would call any difference
  certain.  The test then gives the exact sign-flip p-value of those differences, 2 / 2^n (all n
  share a sign): identical differences decide only from six seeds on (eight under Holm over six
  pairs), never from their lack of spread alone;
* **correction**: Holm over every pair of the task's arms, one family per task (arms of another task
  never dilute a task's tests);
* **outcome**: ``better``/``worse`` for A when the corrected p is below alpha, else ``tied``.

scipy is not needed (the driver writes the leaderboard without the ``analysis`` extra): the t tail is
:func:`trace_bench.store.stats.t_two_sided_p`.  :func:`decide_pairs` is the function to call with
per-seed scores, e.g. ``decide_pairs({"A": {1: 0.5, 2: 0.6, 3: 0.7}, "B": {1: 0.4, 2: 0.4, 3: 0.5}})``.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

from trace_bench.store.ranking import TIE_TOLERANCE
from trace_bench.store.stats import t_two_sided_p

ALPHA = 0.05
TEST_NAME = "paired t-test"
CORRECTION = "Holm over the task's pairs of arms"
Outcome = Literal["better", "worse", "tied"]


@dataclass(frozen=True)
class PairedDifference:
    """A − B over the seeds both arms scored: ``n`` pairs, the mean and sample sd of the differences,
    the t statistic, the two-sided ``p_value`` (raw, before the correction), ``no_variance`` when
    every pair gave the same nonzero difference (then ``p_value`` is the sign-flip 2 / 2^n), and the
    seeds A won, tied and lost."""

    n: int
    mean_diff: float
    sd_diff: float
    statistic: float
    p_value: float
    no_variance: bool
    wins: int
    ties: int
    losses: int

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def paired_difference(a: Sequence[float | None], b: Sequence[float | None],
                      tolerance: float = TIE_TOLERANCE) -> PairedDifference:
    """The paired test of two equally long score lists (a pair with a missing or non-finite score is
    dropped).  NaN p-value for fewer than two pairs: nothing to test."""
    diffs = []
    for x, y in zip(a, b, strict=True):
        if x is None or y is None or not (math.isfinite(x) and math.isfinite(y)):
            continue
        diff = float(x) - float(y)
        diffs.append(0.0 if abs(diff) <= tolerance else diff)
    n = len(diffs)
    wins, losses = sum(d > 0 for d in diffs), sum(d < 0 for d in diffs)
    if n == 0:
        return PairedDifference(0, math.nan, math.nan, math.nan, math.nan, False, 0, 0, 0)
    mean = sum(diffs) / n
    if n == 1:
        return PairedDifference(1, mean, math.nan, math.nan, math.nan, False, wins, n - wins - losses, losses)
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1))
    if abs(mean) <= tolerance:
        statistic, p_value, flat = 0.0, 1.0, False
    elif sd <= tolerance:
        statistic, p_value, flat = math.copysign(math.inf, mean), min(1.0, 2.0 / 2 ** n), True
    else:
        statistic = mean / (sd / math.sqrt(n))
        p_value, flat = t_two_sided_p(statistic, n - 1), False
    return PairedDifference(n, mean, sd, statistic, p_value, flat, wins, n - wins - losses, losses)


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the order given; NaN stays NaN and is not counted."""
    finite = [i for i, p in enumerate(p_values) if not math.isnan(p)]
    order = sorted(finite, key=lambda i: p_values[i])
    adjusted = [math.nan] * len(p_values)
    running = 0.0
    for rank, index in enumerate(order):
        running = max(running, min(1.0, (len(order) - rank) * p_values[index]))
        adjusted[index] = running
    return adjusted


@dataclass(frozen=True)
class PairDecision:
    """The verdict on arms ``arm_a`` and ``arm_b`` of one task: their :class:`PairedDifference`, the
    Holm-adjusted ``p_holm`` and the ``outcome`` for A (``tied`` when not decided)."""

    arm_a: str
    arm_b: str
    difference: PairedDifference
    p_holm: float
    outcome: Outcome

    def for_arm(self, arm: str) -> Outcome:
        """The outcome seen from ``arm`` (one of the two)."""
        if arm == self.arm_a or self.outcome == "tied":
            return self.outcome
        return "worse" if self.outcome == "better" else "better"

    def as_dict(self) -> dict[str, Any]:
        return {"arm_a": self.arm_a, "arm_b": self.arm_b, **self.difference.as_dict(), "p_holm": self.p_holm,
                "outcome": self.outcome}


def decide_pairs(scores: Mapping[str, Mapping[int, float | None]], alpha: float = ALPHA,
                 tolerance: float = TIE_TOLERANCE) -> list[PairDecision]:
    """Every unordered pair of the arms of one task (``arm_a`` < ``arm_b``), each arm given as
    {seed: score}: the paired test over the seeds both scored, Holm-corrected over the pairs, decided
    at ``alpha``.  This is the whole per-task verdict; :func:`decision_map` indexes it."""
    names = sorted(scores)
    tests = []
    for arm_a, arm_b in itertools.combinations(names, 2):
        seeds = sorted(set(scores[arm_a]) & set(scores[arm_b]))
        tests.append((arm_a, arm_b, paired_difference([scores[arm_a][s] for s in seeds],
                                                      [scores[arm_b][s] for s in seeds], tolerance)))
    adjusted = holm([test.p_value for _, _, test in tests])
    decisions = []
    for (arm_a, arm_b, test), p_holm in zip(tests, adjusted, strict=True):
        outcome: Outcome = "tied"
        if not math.isnan(p_holm) and p_holm < alpha:
            outcome = "better" if test.mean_diff > 0 else "worse"
        decisions.append(PairDecision(arm_a, arm_b, test, p_holm, outcome))
    return decisions


def decision_map(decisions: Sequence[PairDecision]) -> dict[frozenset[str], PairDecision]:
    """The decisions of :func:`decide_pairs` by their pair of arms."""
    return {frozenset((d.arm_a, d.arm_b)): d for d in decisions}


def seeds_to_decide_without_variance(pairs: int, alpha: float = ALPHA) -> int:
    """The fewest seeds at which identical nonzero differences decide a pair: the smallest n with
    2 / 2^n below Holm's first level alpha / pairs (6 for one pair at 0.05, 8 for six pairs)."""
    n = 1
    while 2.0 / 2 ** n >= alpha / max(1, pairs):
        n += 1
    return n

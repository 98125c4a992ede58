"""Statistics checked against hand computations, scipy and known reference values: the verdict's
paired t-test (with its no-variance rule), Holm per task, ranks where ties are ties."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("scipy")

from trace_bench.analysis import (  # noqa: E402
    arm_stats,
    holm,
    leaderboard,
    mean_ci,
    paired_test,
    pairwise_tests,
    win_matrix,
)
from trace_bench.store.paired import decide_pairs, paired_difference  # noqa: E402
from trace_bench.store.stats import t_two_sided_p  # noqa: E402


def _jobs(rows: list[tuple[str, str, int, float | None, str]]) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=["task", "trainer", "seed", "score_best", "status"])
    frame["params_label"] = "default"
    frame["scored"] = frame["status"].isin(["ok", "budget_exhausted"]) & frame["score_best"].notna()
    return frame


def test_mean_and_t_interval_by_hand() -> None:
    interval = mean_ci([1.0, 2.0, 3.0])
    assert (interval.n, interval.mean, interval.std) == (3, 2.0, 1.0)
    assert interval.half_width == pytest.approx(4.302653 / math.sqrt(3), abs=1e-6)  # t(0.975, 2) = 4.3027
    assert interval.half_width == pytest.approx(2.484, abs=5e-4)
    assert math.isnan(mean_ci([5.0]).half_width) and mean_ci([]).n == 0


def test_arm_stats_count_failures_and_flag_budget_exhausted() -> None:
    jobs = _jobs([("t", "A", 1, 1.0, "ok"), ("t", "A", 2, 2.0, "ok"), ("t", "A", 3, 3.0, "budget_exhausted"),
                  ("t", "A", 4, None, "failed"), ("t", "A", 5, 9.0, "timeout")])
    row = arm_stats(jobs, bootstrap=True).iloc[0]
    assert (row["count"], row["failed"], row["budget_exhausted"]) == (3, 2, 1)
    assert row["mean"] == 2.0 and row["ci_half"] == pytest.approx(2.484, abs=5e-4)
    assert 1.0 <= row["boot_low"] < 2.0 < row["boot_high"] <= 3.0


def test_leaderboard_ranks_per_task_with_ties() -> None:
    """One seed decides nothing: every scored arm of a task shares rank 1, whatever its mean; an arm
    with no scored job is unranked and listed last."""
    jobs = _jobs([("t1", "A", 1, 0.3, "ok"), ("t1", "B", 1, 0.1 + 0.2, "ok"), ("t1", "C", 1, 0.9, "ok"),
                  ("t1", "D", 1, None, "failed"), ("t2", "A", 1, 0.5, "ok"), ("t2", "B", 1, 0.2, "ok")])
    board = leaderboard(jobs)
    ranks = {(r.task, r.trainer): r.rank for r in board.itertuples()}
    assert ranks[("t1", "C")] == ranks[("t1", "A")] == ranks[("t1", "B")] == 1
    assert pd.isna(ranks[("t1", "D")]) and list(board["trainer"][board["task"] == "t1"])[-1] == "D"
    assert ranks[("t2", "A")] == ranks[("t2", "B")] == 1
    verdicts = {(r.task, r.trainer): r.vs_best for r in board.itertuples()}
    assert verdicts[("t1", "C")] == "best" and verdicts[("t1", "A")] == "tied"


def test_a_sole_first_rank_needs_the_test_to_separate_it_from_every_arm() -> None:
    rows = []
    for seed in range(1, 6):
        rows += [("t", "A", seed, 0.90 + seed / 1000, "ok"), ("t", "B", seed, 0.50 + (seed % 3) / 100, "ok"),
                 ("t", "C", seed, 0.20 + (seed % 2) / 100, "ok")]
    board = leaderboard(_jobs(rows)).set_index("trainer")
    assert board["rank"].tolist() == [1, 2, 3] and board.loc["A", "vs_best"] == "best"
    assert (board.loc[["B", "C"], "vs_best"] == "below").all() and (board.loc[["B", "C"], "p_vs_best"] < 0.05).all()
    rows = [r for r in rows if r[1] != "C"] + [("t", "C", seed, 0.9 + seed / 1000 - (0.05 if seed % 2 else -0.04),
                                                 "ok") for seed in range(1, 6)]
    board = leaderboard(_jobs(rows)).set_index("trainer")
    assert board.loc["A", "rank"] == board.loc["C", "rank"] == 1 and board.loc["C", "vs_best"] == "tied"
    assert board.loc["B", "rank"] == 3, "two arms are found better than B"


def test_paired_t_test_equals_scipy() -> None:
    from scipy import stats

    a, b = [0.61, 0.72, 0.55, 0.68, 0.70, 0.59], [0.52, 0.60, 0.57, 0.58, 0.66, 0.50]
    test = paired_test(a, b)
    reference = stats.ttest_rel(a, b)
    assert test.statistic == pytest.approx(reference.statistic, rel=1e-12)
    assert test.p_value == pytest.approx(reference.pvalue, rel=1e-10)
    low, high = stats.ttest_rel(a, b).confidence_interval()
    assert (test.ci_low, test.ci_high) == (pytest.approx(low, rel=1e-9), pytest.approx(high, rel=1e-9))
    assert (test.wins, test.ties, test.losses) == (5, 0, 1) and not test.no_variance
    same = paired_test([1.0, 2.0, 3.0], [1.0, 2.0 + 1e-12, 3.0])
    assert same.p_value == 1.0 and same.ties == 3 and same.mean_diff == 0.0
    assert paired_test([], []).n == 0 and math.isnan(paired_test([1.0], [0.0]).p_value)


def test_no_variance_between_seeds_decides_only_by_the_sign_flip_bound() -> None:
    """Every seed +0.5: the t statistic is infinite, but the test gives the exact sign-flip p = 2/2^n,
    so three seeds never decide and six do (one pair)."""
    three = paired_difference([0.5, 0.5, 0.5], [0.0, 0.0, 0.0])
    assert three.no_variance and three.p_value == pytest.approx(0.25)
    six = paired_difference([0.5] * 6, [0.0] * 6)
    assert six.no_variance and six.p_value == pytest.approx(2 / 64)
    assert decide_pairs({"A": dict.fromkeys(range(3), 0.5), "B": dict.fromkeys(range(3), 0.0)})[0].outcome == "tied"
    assert decide_pairs({"A": dict.fromkeys(range(6), 0.5), "B": dict.fromkeys(range(6), 0.0)})[0].outcome == "better"


def test_t_tail_equals_scipy() -> None:
    from scipy import stats

    worst = max(abs(t_two_sided_p(t, df) - 2 * stats.t.sf(abs(t), df))
                for df in (1, 2, 3, 4, 7, 12, 30, 31, 200) for t in np.linspace(-25, 25, 101))
    assert worst < 1e-12
    assert t_two_sided_p(math.inf, 3) == 0.0 and t_two_sided_p(0.0, 3) == 1.0


def test_holm_adjustment() -> None:
    assert holm([0.01, 0.04, 0.03, math.nan]) == pytest.approx([0.03, 0.06, 0.06, math.nan], nan_ok=True)


def test_win_matrix_counts_the_per_task_decisions() -> None:
    """Each task is its own Holm family: one pair per task here, so p_holm equals p."""
    rows = []
    for task in ("t1", "t2", "t3"):
        for seed in range(1, 9):
            rows.append((task, "A", seed, seed + (1.0 + seed / 100 if task != "t3" else 0.0), "ok"))
            rows.append((task, "B", seed, float(seed), "ok"))
    jobs = _jobs(rows)
    tests = pairwise_tests(jobs)
    assert list(tests["outcome"]) == ["better", "better", "tied"]
    assert tests["p_holm"].tolist() == pytest.approx(tests["p_value"].tolist())
    matrix = win_matrix(jobs, tests=tests).set_index(["arm", "versus"])
    assert matrix.loc[("A", "B"), ["wins", "ties", "losses"]].tolist() == [2, 1, 0]
    assert matrix.loc[("B", "A"), ["wins", "ties", "losses"]].tolist() == [0, 1, 2]


def test_holm_covers_every_pair_of_a_task_and_no_other_task() -> None:
    """Three arms on two tasks: three pairs per task, one family each."""
    rows = []
    for task in ("t1", "t2"):
        for seed in range(1, 9):
            rows += [(task, "A", seed, seed + 1.0 + seed / 100, "ok"), (task, "B", seed, float(seed), "ok"),
                     (task, "C", seed, float(seed), "ok")]
    tests = pairwise_tests(_jobs(rows))
    assert len(tests) == 6
    planted = tests[tests["arm_a"] == "A"]
    assert planted["p_holm"].tolist() == pytest.approx((3 * planted["p_value"]).tolist())
    assert tests.loc[tests["arm_a"] == "B", "p_holm"].tolist() == pytest.approx([1.0, 1.0])


def test_leaderboard_ranks_on_held_out_scores_when_a_task_has_them() -> None:
    """t1 has a test split: the arm that overfits the selection split ranks below the one that
    generalises; t2 has none and is ranked on the selection split, named as such."""
    rows, test = [], []
    for seed in range(1, 5):
        rows += [("t1", "A", seed, 0.9 + seed / 100, "ok"), ("t1", "B", seed, 0.6 + seed / 200, "ok")]
        test += [0.3 + seed / 50, 0.6 + seed / 100]
    jobs = _jobs([*rows, ("t2", "A", 1, 0.2, "ok"), ("t2", "B", 1, 0.5, "ok")])
    jobs["score_test_best"] = [*test, None, None]
    board = leaderboard(jobs).set_index(["task", "trainer"])
    assert board.loc[("t1", "B"), "rank"] == 1 and board.loc[("t1", "A"), "rank"] == 2
    assert board.loc[("t1", "B"), "mean"] == pytest.approx(0.625)
    assert set(board.loc["t1", "metric"]) == {"test_best"} and set(board.loc["t2", "metric"]) == {"best"}
    assert board.loc[("t2", "B"), "vs_best"] == "best" and board.loc[("t2", "A"), "rank"] == 1, "one seed: tied"
    selection = leaderboard(jobs, metric="best").set_index(["task", "trainer"])
    assert selection.loc[("t1", "A"), "rank"] == 1 and selection.loc[("t1", "B"), "rank"] == 2


def test_intervals_stay_inside_the_declared_score_range() -> None:
    jobs = _jobs([("t", "A", 1, 0.99, "ok"), ("t", "A", 2, 0.9, "ok"), ("t", "A", 3, 1.0, "ok"),
                  ("t", "B", 1, 0.5, "ok"), ("t", "B", 2, 0.5, "ok"), ("t", "B", 3, 0.5, "ok")])
    jobs["score_range"] = [[0.0, 1.0]] * len(jobs)
    board = leaderboard(jobs).set_index("trainer")
    unclipped = mean_ci([0.99, 0.9, 1.0])
    assert unclipped.high > 1.0 and board.loc["A", "ci95_high"] == 1.0
    assert board.loc["A", "ci95_low"] == pytest.approx(unclipped.low)
    assert bool(board.loc["B", "no_variance"]) and not bool(board.loc["A", "no_variance"])
    assert arm_stats(jobs).set_index("trainer").loc["A", "ci_high"] == 1.0

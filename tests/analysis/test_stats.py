"""Statistics checked against hand computations and known reference values."""

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
from trace_bench.analysis.stats import wilcoxon_p_values  # noqa: E402


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
    jobs = _jobs([("t1", "A", 1, 0.3, "ok"), ("t1", "B", 1, 0.1 + 0.2, "ok"), ("t1", "C", 1, 0.9, "ok"),
                  ("t1", "D", 1, None, "failed"), ("t2", "A", 1, 0.5, "ok"), ("t2", "B", 1, 0.2, "ok")])
    board = leaderboard(jobs)
    ranks = {(r.task, r.trainer): r.rank for r in board.itertuples()}
    assert ranks[("t1", "C")] == 1 and ranks[("t1", "A")] == 2 and ranks[("t1", "B")] == 2
    assert pd.isna(ranks[("t1", "D")]) and list(board["trainer"][board["task"] == "t1"])[-1] == "D"
    assert ranks[("t2", "A")] == 1 and ranks[("t2", "B")] == 2


def test_paired_test_reference_values() -> None:
    planted = paired_test([1.1, 2.2, 3.1, 4.3, 5.2, 6.1, 7.4, 8.2], [1, 2, 3, 4, 5, 6, 7, 8])
    assert planted.p_value == pytest.approx(2 / 256)  # exact: all 8 differences positive
    assert (planted.wins, planted.ties, planted.losses) == (8, 0, 0)
    assert planted.ci_low > 0 and planted.boot_low > 0 and planted.boot_p < 0.01
    same = paired_test([1.0, 2.0, 3.0], [1.0, 2.0 + 1e-12, 3.0])
    assert same.p_value == 1.0 and same.ties == 3 and same.mean_diff == 0.0
    assert paired_test([], []).n == 0


def test_batched_wilcoxon_matches_scipy_one_by_one() -> None:
    from scipy import stats

    rng = np.random.default_rng(0)
    diffs = [rng.normal(size=n) for n in (3, 8, 8, 12)] + [np.array([0.0, 1.0, 1.0, -2.0, 3.0]), np.zeros(4)]
    expected = [stats.wilcoxon(d[d != 0]).pvalue for d in diffs[:5]] + [1.0]
    assert wilcoxon_p_values(diffs) == pytest.approx(expected)


def test_holm_adjustment() -> None:
    assert holm([0.01, 0.04, 0.03, math.nan]) == pytest.approx([0.03, 0.06, 0.06, math.nan], nan_ok=True)


def test_win_matrix_counts_significant_tasks_after_holm() -> None:
    rows = []
    for task in ("t1", "t2", "t3"):
        for seed in range(1, 9):
            rows.append((task, "A", seed, seed + (1.0 + seed / 100 if task != "t3" else 0.0), "ok"))
            rows.append((task, "B", seed, float(seed), "ok"))
    jobs = _jobs(rows)
    tests = pairwise_tests(jobs)
    assert list(tests["outcome"]) == ["win", "win", "tie"]
    assert tests["p_holm"].tolist() == pytest.approx([3 * 2 / 256, 3 * 2 / 256, 1.0])  # Holm over 3 tasks
    matrix = win_matrix(jobs, tests=tests).set_index(["arm", "versus"])
    assert matrix.loc[("A", "B"), ["wins", "ties", "losses"]].tolist() == [2, 1, 0]
    assert matrix.loc[("B", "A"), ["wins", "ties", "losses"]].tolist() == [0, 1, 2]


def test_holm_in_the_win_matrix_covers_every_comparison() -> None:
    """Three arms on two tasks make six paired tests; Holm counts all six, not the two tasks of a pair."""
    rows = []
    for task in ("t1", "t2"):
        for seed in range(1, 9):
            rows += [(task, "A", seed, seed + 1.0 + seed / 100, "ok"), (task, "B", seed, float(seed), "ok"),
                     (task, "C", seed, float(seed), "ok")]
    tests = pairwise_tests(_jobs(rows))
    assert len(tests) == 6
    planted = tests[tests["arm_a"] == "A"]
    assert planted["p_value"].tolist() == pytest.approx([2 / 256] * 4)
    assert planted["p_holm"].tolist() == pytest.approx([6 * 2 / 256] * 4)
    assert tests.loc[tests["arm_a"] == "B", "p_holm"].tolist() == pytest.approx([1.0, 1.0])


def test_leaderboard_ranks_on_held_out_scores_when_a_task_has_them() -> None:
    """t1 has a test split: the arm that overfits the selection split ranks below the one that
    generalises; t2 has none and is ranked on the selection split, named as such."""
    jobs = _jobs([("t1", "A", 1, 0.9, "ok"), ("t1", "A", 2, 0.95, "ok"), ("t1", "B", 1, 0.6, "ok"),
                  ("t1", "B", 2, 0.7, "ok"), ("t2", "A", 1, 0.2, "ok"), ("t2", "B", 1, 0.5, "ok")])
    jobs["score_test_best"] = [0.3, 0.4, 0.6, 0.65, None, None]
    board = leaderboard(jobs).set_index(["task", "trainer"])
    assert board.loc[("t1", "B"), "rank"] == 1 and board.loc[("t1", "A"), "rank"] == 2
    assert board.loc[("t1", "B"), "mean"] == pytest.approx(0.625)
    assert set(board.loc["t1", "metric"]) == {"test_best"} and set(board.loc["t2", "metric"]) == {"best"}
    assert board.loc[("t2", "B"), "rank"] == 1
    selection = leaderboard(jobs, metric="best").set_index(["task", "trainer"])
    assert selection.loc[("t1", "A"), "rank"] == 1

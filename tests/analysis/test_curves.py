"""Anytime curves: step functions, equal-budget cuts and budget-normalised areas."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("scipy")

from trace_bench.analysis import (  # noqa: E402,E501
    area_under_curve,
    arm_curves,
    arm_stats,
    best_so_far,
    generalization_gap,
    job_auc,
    score_at,
)


def _curves() -> pd.DataFrame:
    rows = []
    for seed, points in ((1, [(0, 0.0), (2, 0.5), (4, 0.4), (6, 1.0)]), (2, [(0, 0.2), (3, 0.6)])):
        for step, (calls, score) in enumerate(points):
            rows.append({"run_id": "r", "job_id": f"j{seed}", "task": "t", "trainer": "A", "params_label": "default",
                         "seed": seed, "status": "ok", "step": step, "llm_calls": calls, "score": score,
                         "best_score": np.nan if (seed, step) == (1, 2) else score})
    return pd.DataFrame(rows)


def test_best_so_far_is_a_running_max_carried_over_gaps() -> None:
    frame = best_so_far(_curves())
    assert frame[frame["seed"] == 1]["best_so_far"].tolist() == [0.0, 0.5, 0.5, 1.0]


def test_score_at_equal_budget_and_auc_by_hand() -> None:
    cut = score_at(_curves(), "llm_calls", 3).set_index("seed")["score_at"]
    assert cut.to_dict() == {1: 0.5, 2: 0.6}
    assert score_at(_curves(), "llm_calls", -1)["scored"].sum() == 0
    x, y = np.array([0.0, 2.0, 4.0, 6.0]), np.array([0.0, 0.5, 0.5, 1.0])
    # one call is the unit: call k is credited with the best score held once k calls were spent
    assert area_under_curve(x, y, 8.0) == pytest.approx((0 * 1 + 0.5 * 4 + 1.0 * 3) / 8)
    auc = job_auc(_curves(), "llm_calls").set_index("seed")
    assert auc.loc[2, "auc"] == pytest.approx((0.2 * 2 + 0.6 * 4) / 6) and auc.loc[2, "budget"] == 6
    assert arm_stats(auc, column="auc").iloc[0]["count"] == 2


def test_arm_curves_mean_and_interval_on_common_grid() -> None:
    frame = arm_curves(_curves(), "llm_calls").set_index("x")
    assert frame.index.tolist() == [0, 2, 3, 4, 6]
    assert frame.loc[3, "mean"] == pytest.approx(0.55) and frame.loc[6, "mean"] == pytest.approx(0.8)
    assert frame.loc[6, "high"] - frame.loc[6, "mean"] == pytest.approx(12.7062 * np.std([1.0, 0.6], ddof=1)
                                                                        / np.sqrt(2), rel=1e-4)


def test_frames_without_run_or_status_columns_work() -> None:
    """A live run's curves (built from the manifest, as the UI does) have neither column."""
    frame = _curves().drop(columns=["run_id", "status"])
    assert arm_curves(frame, "llm_calls")["mean"].iloc[-1] == pytest.approx(0.8)
    assert job_auc(frame, "llm_calls")["scored"].all()


def test_generalization_gap() -> None:
    jobs = pd.DataFrame({"task": "t", "trainer": "A", "params_label": "default", "scored": True,
                         "selection_split": "validation", "score_best": [0.9, 0.8, 0.7],
                         "score_test": [0.7, 0.7, np.nan]})
    gap = generalization_gap(jobs).iloc[0]
    assert gap["count"] == 2 and gap["gap_mean"] == pytest.approx(0.15) and gap["selection_split"] == "validation"


def _improving_at_budget() -> pd.DataFrame:
    """A stub-like matrix under ``llm_calls: 5``: arm ``late`` improves on its fifth (last) call, arm
    ``flat`` never improves; both spend the whole budget, so the common budget B is 5."""
    rows = []
    for trainer, final in (("late", 0.9), ("flat", 0.1)):
        for seed in (1, 2, 3):
            for step, (calls, score) in enumerate([(0, 0.1), (3, 0.1), (5, final)]):
                rows.append({"run_id": "r", "job_id": f"{trainer}{seed}", "task": "t", "trainer": trainer,
                             "params_label": "default", "seed": seed, "status": "ok", "step": step,
                             "llm_calls": calls, "score": score, "best_score": max(0.1, score)})
    return pd.DataFrame(rows)


def test_auc_credits_an_improvement_reached_exactly_at_the_budget() -> None:
    auc = job_auc(_improving_at_budget(), "llm_calls").set_index("job_id")
    assert (auc["budget"] == 5).all()
    for seed in (1, 2, 3):
        assert auc.loc[f"late{seed}", "auc"] > 0.1 > auc.loc[f"flat{seed}", "auc"] - 1e-12
    # each call is credited with the best score held once it was spent: 4 calls at 0.1, the 5th at 0.9
    assert auc.loc["late1", "auc"] == pytest.approx((4 * 0.1 + 0.9) / 5)
    assert score_at(_improving_at_budget(), "llm_calls", 5).set_index("job_id").loc["late1", "score_at"] == 0.9


def test_auc_on_a_continuous_axis_credits_the_last_slice() -> None:
    x, y = np.array([0.0, 0.02]), np.array([0.0, 1.0])
    assert area_under_curve(x, y, 0.02, unit=0.0002) == pytest.approx(0.01)
    frame = _improving_at_budget().assign(usd=lambda f: f["llm_calls"] * 0.001)
    assert (job_auc(frame, "usd").set_index("job_id").loc[["late1", "late2"], "auc"] > 0.1).all()


def test_the_harness_measurement_after_a_stop_never_raises_the_curve() -> None:
    """A ``harness_final`` (or ``stop``) row's score is not the trainer's: even without a best_score
    cell it does not count; a row of an older curve (no kind) still does."""
    import pandas as pd

    from trace_bench.analysis.curves import best_so_far

    curves = pd.DataFrame({"job_id": ["a"] * 3 + ["b"] * 2, "step": [0, 1, 1, 0, 1], "llm_calls": [0, 2, 4, 0, 2],
                           "score": [0.0, 0.1, 0.9, 0.0, 0.5], "best_score": [0.0, None, None, 0.0, None],
                           "kind": ["initial", "step", "harness_final", "", ""]})
    best = best_so_far(curves).groupby("job_id")["best_so_far"].max()
    assert best["a"] == 0.1 and best["b"] == 0.5


def test_an_arm_that_stopped_early_ends_at_its_own_largest_spend() -> None:
    """Arm B's jobs stop at 3 calls while A's run to 6: B's mean curve ends at 3 (its chart stops
    there with an end marker), and a B job that stopped at 2 holds its best up to B's end."""
    rows = []
    for trainer, seed, points in (("A", 1, [(0, 0.0), (6, 1.0)]), ("B", 1, [(0, 0.1), (3, 0.4)]),
                                  ("B", 2, [(0, 0.3), (2, 0.6)])):
        for step, (calls, score) in enumerate(points):
            rows.append({"job_id": f"{trainer}{seed}", "task": "t", "trainer": trainer, "params_label": "default",
                         "seed": seed, "step": step, "llm_calls": calls, "score": score, "best_score": score})
    frame = arm_curves(pd.DataFrame(rows), "llm_calls")
    arm_b = frame[frame["trainer"] == "B"].set_index("x")
    assert arm_b.index.max() == 3 and frame[frame["trainer"] == "A"]["x"].max() == 6
    assert arm_b.loc[3, "n"] == 2 and arm_b.loc[3, "mean"] == pytest.approx(0.5)

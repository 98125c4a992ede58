"""The audit's flags: scores an honest candidate cannot reach (issue 40, finding 7)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from trace_bench.runner.job.audit import score_flags


def _result(**fields: Any) -> Any:
    base = {"pct_of_best_known": None, "metrics_best": {}, "best_known": None, "best_known_source": "",
            "selection_split": "train", "score_best": None, "score_test_best": None, "score_test_last": None}
    return SimpleNamespace(**{**base, **fields})


def test_a_score_beyond_the_best_known_value_is_flagged_with_its_exact_check() -> None:
    problem = SimpleNamespace(metadata={})
    assert score_flags(problem, _result(pct_of_best_known=100.0, best_known=2.635)) == []
    [flag] = score_flags(problem, _result(pct_of_best_known=101.5, best_known=2.635, best_known_source="B.12",
                                          metrics_best={"beats_best_known": 1.0}))
    assert (flag.kind, flag.verified, flag.bound) == ("beyond_best_known", True, 100.0)
    assert "confirmed by an exact re-check" in flag.detail and "B.12" in flag.detail
    [unchecked] = score_flags(problem, _result(pct_of_best_known=150.0, best_known=1.0))
    assert unchecked.verified is None and "no exact re-check" in unchecked.detail


def test_a_fit_beyond_the_datas_noise_is_flagged_per_split() -> None:
    problem = SimpleNamespace(metadata={"score_bounds": {"train": -7e-7, "test": -7.5e-7, "why": "noise 1e-3"}})
    assert score_flags(problem, _result(score_best=-1.1e-6, score_test_best=-1.0e-6)) == []
    flags = score_flags(problem, _result(score_best=-1e-20, score_test_best=-3e-21, score_test_last=-2e-6))
    assert [(f.kind, f.field) for f in flags] == [("beyond_noise", "score_best"), ("beyond_noise", "score_test_best")]
    assert all("noise 1e-3" in f.detail for f in flags)

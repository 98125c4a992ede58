"""Multi-objective for real: per-objective scores on every curve step and state_history line, and
``pareto`` keeps a non-dominated set and picks from it by its documented rule (closest to the ideal
point after normalizing over the front), so it selects differently from ``weighted`` where the
balanced trade-off is not the weighted sum's favourite."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from trace_bench.runner.job.recorder import BestSoFar
from trace_bench.store.job_store import JobStore
from trace_bench.testing.trainer_contract import run_trainer
from trace_bench.trainers.objectives import ObjectiveConfig, front_order

MINIMIZE = frozenset({"base_loss", "reg_loss"})
WEIGHTS = {"base_loss": 1.0, "reg_loss": 1.0}
# (base_loss, reg_loss), both minimized: A wins the weighted sum, C is the balanced trade-off
A, B, C = {"base_loss": -1.0, "reg_loss": 0.10}, {"base_loss": -0.6, "reg_loss": 0.0}, {"base_loss": -0.9, "reg_loss": 0.03}
DOMINATED = {"base_loss": -0.5, "reg_loss": 0.2}


def _config(mode: str, **extra: object) -> ObjectiveConfig:
    return ObjectiveConfig(mode=mode, weights=WEIGHTS, minimize=MINIMIZE, **extra)  # type: ignore[arg-type]


def _weighted(point: dict[str, float]) -> float:
    return -(point["base_loss"] + point["reg_loss"])


def _pick(mode: str, points: list[dict[str, float]]) -> dict[str, float]:
    best = BestSoFar(_config(mode))
    for index, point in enumerate(points):
        best.offer(_weighted(point), [index], point)
    return best.score_dict


def test_pareto_and_weighted_pick_differently_from_the_same_states() -> None:
    points = [DOMINATED, A, B, C]
    assert _pick("weighted", points) == A
    assert _pick("pareto", points) == C
    best = BestSoFar(_config("pareto"))
    for index, point in enumerate(points):
        best.offer(_weighted(point), [index], point)
    assert [entry.score_dict for entry in best.front] == [A, B, C], "the dominated state is not kept"


def test_tie_breaks_of_a_front() -> None:
    points = [A, B, C]
    assert front_order(points, _config("pareto"))[0] == 2
    assert front_order(points, _config("pareto", tie_break="weighted"))[0] == 0, "weighted = the weighted pick"
    lexicographic = _config("pareto", tie_break="lexicographic", pareto_metrics=("reg_loss", "base_loss"))
    assert front_order(points, lexicographic)[0] == 1
    with pytest.raises(ValueError, match="tie_break"):
        _config("pareto", tie_break="nearest")


def test_adding_a_state_can_move_the_pick_to_an_earlier_one() -> None:
    """The front is renormalized when it grows: the best may change to a state offered before."""
    best = BestSoFar(_config("pareto"))
    assert best.offer(_weighted(A), ["a"], A, step=1)
    best.offer(_weighted(C), ["c"], C, step=2)
    best.offer(_weighted(B), ["b"], B, step=3)
    assert best.state == ["c"] and best.step == 2


def _points(job: JobStore) -> list[dict[str, float]]:
    """Every measured state's objectives, read back from curve.csv (its obj_ columns) and the
    final history line."""
    header = job.curve_path.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header[-2:] == ["obj_base_loss", "obj_reg_loss"]
    rows = job.read_curve()
    assert rows and all(set(row.objectives) == {"base_loss", "reg_loss"} for row in rows), "every step has objectives"
    points = [{name: float(value) for name, value in row.objectives.items() if value is not None} for row in rows]
    history = job.read_state_history()
    assert all(set(line.score_dict) == {"base_loss", "reg_loss"} for line in history)
    return [*points, {name: float(value) for name, value in history[-1].score_dict.items() if value is not None}]


def _closest_to_ideal(points: list[dict[str, float]]) -> dict[str, float]:
    """The documented rule, written out independently for two minimized objectives."""
    front = [p for p in points if not any(
        q["base_loss"] <= p["base_loss"] and q["reg_loss"] <= p["reg_loss"] and q != p for q in points)]
    lows = {m: min(p[m] for p in front) for m in WEIGHTS}
    highs = {m: max(p[m] for p in front) for m in WEIGHTS}

    def distance(p: dict[str, float]) -> float:
        gaps = [(p[m] - lows[m]) / (highs[m] - lows[m]) if highs[m] > lows[m] else 0.0 for m in WEIGHTS]
        return math.sqrt(sum(g * g for g in gaps))

    return min(front, key=lambda p: (distance(p), -_weighted(p)))


def _close(a: dict[str, float], b: dict[str, float]) -> bool:
    return all(math.isclose(a[m], b[m], rel_tol=1e-9, abs_tol=1e-9) for m in WEIGHTS)


def test_pareto_and_weighted_jobs_select_differently_on_the_camel_task(tmp_path: Path) -> None:
    params = {"ps_steps": 4, "ps_candidates": 3, "ps_proposals": 2}
    differ = 0
    for seed in (1, 2, 3):
        picks = {}
        for mode in ("weighted", "pareto"):
            outcome = run_trainer("PrioritySearch", tmp_path, task="internal:multiobjective_convex", params=params,
                                  seed=seed, eval_kwargs={"objective_mode": mode}, run_name=f"{mode}-{seed}")
            result = outcome.result
            assert result.status == "ok", result.error
            points = _points(outcome.job)
            if mode == "weighted":
                expected = max(points, key=_weighted)
            else:
                expected = _closest_to_ideal(points)
            assert _close(result.score_dict_best, expected), (mode, seed, result.score_dict_best, expected)
            assert math.isclose(result.score_best, _weighted(result.score_dict_best), abs_tol=1e-9)
            picks[mode] = result.score_dict_best
        differ += not _close(picks["weighted"], picks["pareto"])
    assert differ >= 1, "pareto selected exactly what weighted selected on every seed"

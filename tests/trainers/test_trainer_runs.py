"""Every built-in trainer runs the internal tasks end to end in stub mode and improves on them."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.trainers._cases import SHORT
from trace_bench.testing.trainer_contract import check_curve, run_trainer

TASKS = ("internal:numeric_param", "internal:code_param", "internal:multi_param")


@pytest.mark.parametrize("trainer_id", sorted(SHORT))
def test_trainer_improves_on_internal_tasks(trainer_id: str, tmp_path: Path) -> None:
    improved = []
    for task in TASKS:
        outcome = run_trainer(trainer_id, tmp_path, task=task, params=SHORT[trainer_id],
                              run_name=task.split(":")[1])
        result = outcome.result
        assert result.status == "ok", f"{task}: {result.error}\n{result.traceback}"
        assert result.n_steps >= 1
        check_curve(outcome)
        assert outcome.job.state_path("best").exists()
        assert result.score_best >= result.score_initial
        if result.score_best > result.score_initial:
            improved.append(task)
    assert len(improved) >= 2, f"{trainer_id} beat the initial score only on {improved}"


@pytest.mark.parametrize("mode", ["weighted", "pareto"])
@pytest.mark.parametrize("trainer_id", sorted(SHORT))
def test_multiobjective_modes(trainer_id: str, mode: str, tmp_path: Path) -> None:
    """Weighted and Pareto objectives select through score dicts; a known better point is found."""
    outcome = run_trainer(trainer_id, tmp_path, task="internal:multiobjective_convex",
                          params=SHORT[trainer_id], eval_kwargs={"objective_mode": mode})
    result = outcome.result
    assert result.status == "ok", result.error
    assert set(result.score_dict_best) == {"base_loss", "reg_loss"}
    assert result.score_best > result.score_initial

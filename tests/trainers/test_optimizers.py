"""Every optimizer works under every trainer in stub mode, through the metered client."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.trainers._cases import SHORT
from trace_bench.testing.trainer_contract import run_trainer

OPTIMIZERS = ("OptoPrime", "OptoPrimeMulti", "OPRO", "TextGrad")


@pytest.mark.parametrize("optimizer", OPTIMIZERS)
@pytest.mark.parametrize("trainer_id", sorted(SHORT))
def test_optimizer_completes_steps(trainer_id: str, optimizer: str, tmp_path: Path) -> None:
    outcome = run_trainer(trainer_id, tmp_path, task="internal:multi_param", params=SHORT[trainer_id],
                          optimizer=optimizer)
    result = outcome.result
    assert result.status == "ok", f"{result.error}\n{result.traceback}"
    assert result.n_steps >= 1
    assert result.usage_by_role["optimizer"].llm_calls >= 1
    assert not any(e.get("error") for e in outcome.events() if e.get("type") == "llm_call")


@pytest.mark.parametrize("optimizer", ["OptoPrimeMulti", "TextGrad", "OptoPrime", "OPRO"])
def test_optimizer_proposals_are_applied(optimizer: str, tmp_path: Path) -> None:
    """The optimizers whose stub answers carry real proposals improve the task (``llm.create`` path
    for OptoPrimeMulti and TextGrad; OPRO's JSON history of past variables)."""
    outcome = run_trainer("MinibatchAlgorithm", tmp_path, params={"num_steps": 4}, optimizer=optimizer)
    assert outcome.result.status == "ok", outcome.result.error
    assert outcome.result.score_best > outcome.result.score_initial


def test_optoprimemulti_temperature_range(tmp_path: Path) -> None:
    """0.1.3.8 raises when ``temperature_range`` is passed; the builder sets it after construction.
    ``num_responses`` calls are made per proposal."""
    kwargs = {"num_responses": 3, "temperature_range": [0.9, 0.1]}
    outcome = run_trainer("MinibatchAlgorithm", tmp_path, params={"num_steps": 1}, optimizer="OptoPrimeMulti",
                          optimizer_kwargs=kwargs)
    assert outcome.spec.optimizer_kwargs == kwargs
    assert outcome.result.status == "ok", outcome.result.error
    assert outcome.result.usage_by_role["optimizer"].llm_calls == 3

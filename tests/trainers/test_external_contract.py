"""The trainer contract (determinism, curve, restorable best state, budget) for external trainers."""

from __future__ import annotations

from pathlib import Path

import pytest

from trace_bench.testing import check_trainer

SHORT = {
    "DSPyTrainer": {"dspy_optimizer": "COPRO", "breadth": 3, "depth": 2},
    "TextGradTrainer": {"num_steps": 3},
    "OpenEvolveTrainer": {"iterations": 4},
    "GEPATrainer": {"max_metric_calls": 16},
}


@pytest.mark.parametrize("trainer_id", sorted(SHORT))
def test_external_trainer_contract(trainer_id: str, tmp_path: Path) -> None:
    check_trainer(trainer_id, tmp_path, params=SHORT[trainer_id])

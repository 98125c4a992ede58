"""The trainer contract (trace_bench.testing) holds for every built-in trainer, and catches a bad one."""

from __future__ import annotations

import random
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.trainers._cases import ALL
from trace_bench.registry import trainers as registry
from trace_bench.testing import check_determinism, check_trainer, trainer_contract_test
from trace_bench.trainers.base import Trainer, TrainerParams


@pytest.mark.parametrize("trainer_id", sorted(ALL))
def test_builtin_trainer_contract(trainer_id: str, tmp_path: Path) -> None:
    check_trainer(trainer_id, tmp_path, params=ALL[trainer_id])


class UnseededTrainer(Trainer):
    """Breaks the contract: draws from an unseeded generator instead of ``ctx.rng``."""

    id = "UnseededTrainer"
    Params = TrainerParams
    uses_optimizer = False

    def train(self) -> None:
        noise = random.Random()
        for _ in range(2):
            state = [noise.uniform(-5, 5) if isinstance(v, float) else v for v in self.ctx.current_state()]
            self.ctx.apply(state)
            self.ctx.report_step(state)


@pytest.fixture
def unseeded_trainer() -> Iterator[str]:
    registry.BUILTIN["UnseededTrainer"] = f"{__name__}:UnseededTrainer"
    registry.all_trainers.cache_clear()
    try:
        yield "UnseededTrainer"
    finally:
        del registry.BUILTIN["UnseededTrainer"]
        registry.all_trainers.cache_clear()


def test_contract_catches_unseeded_randomness(unseeded_trainer: str, tmp_path: Path) -> None:
    with pytest.raises(AssertionError, match="two different curves"):
        check_determinism(unseeded_trainer, tmp_path)


# the pytest helper a plugin's test suite would use
test_contract_helper = trainer_contract_test("NoOpTrainer", "MinibatchAlgorithm", params={"num_steps": 2})

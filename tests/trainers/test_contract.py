"""The trainer contract (trace_bench.testing) holds for every registered trainer, and catches a bad one.

The cases are the registry's (``contract_cases``): a trainer registered in catalog.json or by an
entry point is checked here with no edit, with the short settings of its catalog row; one whose
optional library is missing here is skipped with the reason.
"""

from __future__ import annotations

import importlib.util
import random
from collections.abc import Iterator
from importlib.metadata import EntryPoint
from pathlib import Path
from typing import Any

import pytest

import trace_bench._util.entry_points as entry_points_module
from trace_bench.registry import trainers as registry
from trace_bench.registry.trainer_catalog import BUILTIN_TRAINERS, ENTRY_POINT_GROUP
from trace_bench.testing import (
    DEFAULT_TASK,
    ContractCase,
    check_determinism,
    check_trainer,
    contract_cases,
    trainer_contract_test,
)
from trace_bench.trainers.base import Trainer, TrainerParams

CASES = contract_cases()


@pytest.mark.parametrize("case", [
    pytest.param(case, id=case.trainer_id,
                 marks=[pytest.mark.skip(reason=f"{case.trainer_id}: {case.unavailable}")] if case.unavailable else [])
    for case in CASES])
def test_registered_trainer_contract(case: ContractCase, tmp_path: Path) -> None:
    check_trainer(case.trainer_id, tmp_path, task=case.task, params=case.params)


def test_every_registered_trainer_is_a_case() -> None:
    registered = set(registry.all_trainers()) | {meta.id for meta in BUILTIN_TRAINERS}
    assert [case.trainer_id for case in CASES] == sorted(registered, key=str.lower)
    by_id = {case.trainer_id: case for case in CASES}
    for meta in BUILTIN_TRAINERS:  # each with its catalog row's short settings
        assert (by_id[meta.id].params, by_id[meta.id].task) == (dict(meta.contract.params),
                                                              meta.contract.task or DEFAULT_TASK), meta.id


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


class Requiring(UnseededTrainer):
    id = "RequiringTrainer"
    requires = ("surely_not_installed_lib",)


def _plugins(monkeypatch: pytest.MonkeyPatch, **targets: str) -> None:
    points = [EntryPoint(name, target, ENTRY_POINT_GROUP) for name, target in targets.items()]
    monkeypatch.setattr(entry_points_module, "entry_points",
                        lambda group: points if group == ENTRY_POINT_GROUP else [])


def test_a_newly_registered_trainer_is_a_case_and_one_that_cannot_run_says_why(
        monkeypatch: pytest.MonkeyPatch) -> None:
    _plugins(monkeypatch, UnseededTrainer=f"{__name__}:UnseededTrainer", RequiringTrainer=f"{__name__}:Requiring")
    real = importlib.util.find_spec

    def find_spec(name: str, *args: Any) -> Any:
        return None if name == "dspy" else real(name, *args)

    monkeypatch.setattr(importlib.util, "find_spec", find_spec)
    cases = {case.trainer_id: case for case in contract_cases()}
    assert cases["UnseededTrainer"] == ContractCase("UnseededTrainer", {}, DEFAULT_TASK, None)
    assert cases["RequiringTrainer"].unavailable == "missing surely_not_installed_lib"
    dspy = cases["DSPyTrainer"]  # an optional extra's library missing: kept, with the reason and its settings
    assert (dspy.unavailable, dspy.params["dspy_optimizer"]) == ("install trace-bench[dspy]", "COPRO")

"""The non-LLM baselines (RandomSearch, OptunaSearch, SLSQPMultistart) and ``budget.evaluations``: every
trainer, LLM or not, stops at its evaluations budget; the baselines make no LLM call, search the task's
numbers or its declared continuous form, and their candidates run in the sandbox like any other."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import numpy as np
import pytest

from trace_bench._util.errors import ConfigError
from trace_bench.tasks.discovery.catalog import BUILTIN
from trace_bench.testing.trainer_contract import check_curve, run_trainer
from trace_bench.trainers.baselines.space import SpaceError, apply_values, build_space

CODE = 'def f(n):\n    """Spread 0.5 é."""\n    r = 0.5 / n\n    return [r * 2, -3.0, True, "7"]\n'


def test_the_space_is_the_state_s_numbers_and_a_candidate_rewrites_them_in_place() -> None:
    dimensions = build_space([1.5, CODE, "text"], ["x", "__code", "prompt"], scale=2.0)
    assert [(d.name, d.initial, d.integer) for d in dimensions] == [
        ("x", 1.5, False), ("__code:literal0", 0.5, False), ("__code:literal1", 2.0, True),
        ("__code:literal2", 3.0, False)]  # booleans and strings are not numbers; -3.0 is minus a literal 3.0
    assert dimensions[0].low == pytest.approx(1.5 - 3.0) and dimensions[2].high == 6
    state = apply_values([1.5, CODE, "text"], dimensions, [2.25, -0.125, 4.4, 1e-7])
    assert state[0] == 2.25 and state[2] == "text"
    assert "r = (-0.125) / n" in state[1] and "r * 4," in state[1] and "-1e-07," in state[1]
    ast.parse(state[1])  # still a program, the docstring's non-ASCII text untouched
    declared = build_space([1.5, CODE], ["x", "__code"], declared={"x": {"low": 0.1, "high": 10, "log": True}})
    assert [(d.name, d.low, d.high, d.log) for d in declared] == [("x", 0.1, 10.0, True)]
    with pytest.raises(SpaceError, match="not a trainable parameter"):
        build_space([1.5], ["x"], declared={"y": {"low": 0, "high": 1}})
    with pytest.raises(SpaceError, match="no number"):
        build_space(["just text"], ["prompt"])


@pytest.mark.parametrize(("trainer_id", "params"), [
    ("NoOpTrainer", {"num_steps": 10}), ("RandomSearch", {}), ("OptunaSearch", {"sampler": "tpe"}),
    ("PrioritySearch", {"ps_steps": 10, "ps_candidates": 2, "ps_proposals": 2}),
])
def test_budget_evaluations_stops_every_trainer(trainer_id: str, params: dict, tmp_path: Path) -> None:
    outcome = run_trainer(trainer_id, tmp_path, params=params, budget={"evaluations": 4})
    result = outcome.result
    assert result.status == "budget_exhausted" and "evaluations 4 >= 4" in result.error, result.error
    assert result.n_evals == 4 and result.budget_spent["evaluations"] == 4
    check_curve(outcome)
    assert max(row["n_evals"] or 0 for row in outcome.curve()) == 4
    if trainer_id != "PrioritySearch":
        assert result.llm_calls == 0 and result.total_tokens == 0


def test_random_and_optuna_search_improve_a_number_without_an_llm(tmp_path: Path) -> None:
    for trainer_id, params in (("RandomSearch", {"samples": 6}), ("OptunaSearch", {"samples": 6, "sampler": "cmaes"})):
        result = run_trainer(trainer_id, tmp_path, params=params, run_name=trainer_id).result
        assert result.status == "ok" and result.n_evals == 6 and result.n_steps == 6
        assert result.llm_calls == 0 and result.score_best > result.score_initial, result


def test_slsqp_multistart_solves_the_continuous_form_and_is_scored_in_the_sandbox(tmp_path: Path) -> None:
    outcome = run_trainer("SLSQPMultistart", tmp_path, task="discovery:circle_packing_26",
                          params={"starts": 1, "maxiter": 40})
    result = outcome.result
    assert result.status == "ok" and result.n_evals == 1 and result.llm_calls == 0
    assert result.score_trust == "trusted" and result.score_best > result.score_initial + 0.05
    assert result.sandbox and 90 < result.pct_of_best_known < 100
    [block] = [p.value for p in outcome.job.read_state("best").parameters]
    assert block.startswith("def pack_circles(n):") and "return np.array([[" in block


def test_slsqp_is_refused_for_a_task_without_a_continuous_form() -> None:
    from trace_bench.config import parse_config
    from trace_bench.matrix.expand import expand_matrix
    from trace_bench.registry.tasks import TaskCatalog

    config = parse_config({"tasks": ["discovery:kissing_11"], "trainers": ["SLSQPMultistart"], "mode": "stub"})
    with pytest.raises(ConfigError, match="continuous"):
        expand_matrix(config, TaskCatalog.create())


@pytest.mark.parametrize("name", sorted(n for n, p in BUILTIN.items() if not p.no_continuous_form))
def test_a_continuous_form_s_construction_is_valid_for_its_scorer(name: str) -> None:
    """From a random start (no solve), the repaired construction is a valid one; its block is a program."""
    from tests.tasks.test_discovery_problems import MODULES
    from trace_bench.tasks.discovery.problems.continuous import form_of

    problem = BUILTIN[name]
    form = form_of(name, problem.settings, steps=20)
    x = form.start(np.random.default_rng(0))
    assert x.shape == (form.size,)
    construction = form.construction(x)
    result = MODULES[problem.module].score(construction, **{**problem.score_settings(), "tolerance": 0.0})
    assert 0 < result["combined_score"] < 1
    ast.parse(form.block(construction, "a start"))


def test_list_trainers_shows_the_baselines_with_their_parameter_kinds(capsys: pytest.CaptureFixture[str]) -> None:
    from trace_bench.cli.main import main

    main(["list-trainers", "--all", "--format", "json"])
    rows = {row["trainer_id"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["RandomSearch"]["parameters"] == "numeric,code" and rows["RandomSearch"]["status"] == "available"
    assert rows["OptunaSearch"]["status"] == "available" and "CMA-ES" in rows["OptunaSearch"]["description"]
    assert rows["SLSQPMultistart"]["parameters"] == "continuous"

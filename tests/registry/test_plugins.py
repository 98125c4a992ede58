"""Entry-point plugins: a third-party task suite and trainer, found the way an installed package is.

The plugin is a hand-written distribution (a package and its ``.dist-info`` with
``entry_points.txt``) in a temporary directory put on ``PYTHONPATH``, so the CLI, the forked job
processes and ``importlib.metadata`` see it exactly as after ``pip install``; nothing is installed.
"""

from __future__ import annotations

import csv
import json
import os
from pathlib import Path

import pytest

from tests.conftest import run_cli

SUITE = '''
from trace_bench.registry.specs import TaskSpec

SUITE = "plugdemo"


def discover():
    return [TaskSpec(id="plugdemo:reach_seven", suite=SUITE, module="tb_plugin_demo.reach_seven",
                     description="Move one float from 0 to 7.", parameter_kinds=("numeric",), scoring="-|x - 7|")]
'''

TASK = '''
from opto import trace

from trace_bench.tasks.guide import Guide


class DistanceToSeven(Guide):
    def get_feedback(self, query, response, reference=None, **kwargs):
        return -abs(float(response) - 7.0), "move towards 7"


def build_trace_problem(**eval_kwargs):
    return {"param": trace.node(0.0, name="x", trainable=True), "guide": DistanceToSeven(),
            "train_dataset": {"inputs": [0], "infos": [7.0]}}
'''

# A trainer with no LLM at all: each step adds `increment` to every parameter and reports the
# new state, so its scores prove that this plugin's code, not a built-in, ran in the job.
TRAINER = '''
from pydantic import Field

from trace_bench.trainers.base import Trainer, TrainerParams


class StepUpParams(TrainerParams):
    num_steps: int = Field(default=3, ge=1)
    increment: float = 1.0


class StepUp(Trainer):
    id = "StepUpTrainer"
    aliases = ("StepUp",)
    description = "Adds a constant to every parameter each step (a test plugin)."
    Params = StepUpParams
    uses_optimizer = False

    def train(self):
        state = self.ctx.current_state()
        loader = self.ctx.loader(batch_size=1)
        for _ in range(self.params.num_steps):
            state = [value + self.params.increment for value in state]
            self.ctx.apply(state)
            inputs, infos = loader.next_batch()
            score, score_dict = self.ctx.score_of(self.ctx.run_batch(state, inputs, infos))
            self.ctx.report_step(state, score, score_dict, accepted=True)
'''

ENTRY_POINTS = """[trace_bench.tasks]
plugdemo = tb_plugin_demo

[trace_bench.trainers]
StepUpTrainer = tb_plugin_demo.trainer:StepUp
BrokenTrainer = tb_plugin_demo.no_such_module:Broken
"""


@pytest.fixture(scope="module")
def plugin_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    site = tmp_path_factory.mktemp("site")
    package = site / "tb_plugin_demo"
    package.mkdir()
    (package / "__init__.py").write_text(SUITE, encoding="utf-8")
    (package / "reach_seven.py").write_text(TASK, encoding="utf-8")
    (package / "trainer.py").write_text(TRAINER, encoding="utf-8")
    info = site / "tb_plugin_demo-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: tb-plugin-demo\nVersion: 0.1\n", encoding="utf-8")
    (info / "entry_points.txt").write_text(ENTRY_POINTS, encoding="utf-8")
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path}


def _listed(proc_stdout: str, key: str) -> dict[str, dict[str, str]]:
    return {entry[key]: entry for entry in json.loads(proc_stdout)}


def test_plugin_suite_and_trainer_are_listed(plugin_env: dict[str, str]) -> None:
    tasks = _listed(run_cli("list-tasks", "--format", "json", env=plugin_env, check=True).stdout, "task_id")
    assert "plugdemo:reach_seven" in tasks
    trainers = _listed(run_cli("list-trainers", "--all", "--format", "json", env=plugin_env, check=True).stdout,
                       "trainer_id")
    assert trainers["StepUpTrainer"]["status"] == "available" and trainers["StepUpTrainer"]["source"] == "plugin"
    # a plugin that cannot be imported is listed unavailable, with the reason, and breaks nothing else
    assert trainers["BrokenTrainer"]["status"] != "available"
    assert "no_such_module" in trainers["BrokenTrainer"]["reason"]
    plain = run_cli("list-trainers", "--format", "json", env=plugin_env, check=True).stdout
    assert "BrokenTrainer" not in plain and "StepUpTrainer" in plain


def test_plugin_task_and_trainer_run_through_the_pipeline(plugin_env: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [plugdemo:reach_seven]\nseeds: [1, 2]\nmax_workers: 2\n"
                      "trainers:\n  - id: StepUp\n    num_steps: 3\n  - NoOpTrainer\n")
    validated = run_cli("validate", "--config", str(config), env=plugin_env)
    assert validated.returncode == 0, validated.stderr
    proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet", env=plugin_env)
    assert proc.returncode == 0, proc.stderr
    [run] = list((tmp_path / "runs").iterdir())
    with open(run / "results.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    assert len(rows) == 4 and {r["status"] for r in rows} == {"ok"}
    assert {r["suite"] for r in rows} == {"plugdemo"}
    stepped = [r for r in rows if r["trainer"] == "StepUpTrainer"]
    baseline = [r for r in rows if r["trainer"] == "NoOpTrainer"]
    assert len(stepped) == 2 and len(baseline) == 2
    for row in stepped:  # 0 -> 3 in three steps of +1: the distance to 7 falls from 7 to 4
        assert (float(row["score_initial"]), float(row["score_best"]), row["n_steps"]) == (-7.0, -4.0, "3")
        curve = (run / "jobs" / row["job_id"] / "artifacts" / "curve.csv").read_text().splitlines()
        # header, the initial state, three steps, and the record's closing row at the job's total spend
        assert len(curve) == 1 + 4 + 1 and curve[-1].endswith(",final"), curve
    assert all(float(r["score_best"]) == -7.0 for r in baseline)


def test_a_broken_plugin_trainer_is_a_config_error(plugin_env: dict[str, str], tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [plugdemo:reach_seven]\ntrainers: [BrokenTrainer]\n")
    proc = run_cli("validate", "--config", str(config), env=plugin_env)
    assert proc.returncode == 2 and "BrokenTrainer" in proc.stderr and "no_such_module" in proc.stderr, proc.stderr


def test_without_the_plugin_its_ids_are_unknown(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [plugdemo:reach_seven]\ntrainers: [StepUpTrainer]\n")
    proc = run_cli("validate", "--config", str(config))
    assert proc.returncode == 2 and "plugdemo" in proc.stderr

"""A task directory (`--root`) names its own suite with `SUITE = "..."` in its `__init__.py`, as a
built-in suite package does; without one its tasks stay `llm4ad:<name>`."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from tests.conftest import run_cli

TASK = '''
from opto import trace

from trace_bench.tasks.guide import Guide


class Distance(Guide):
    def get_feedback(self, query, response, reference=None, **kwargs):
        return -abs(float(response) - 2.0), "move towards 2"


def build_trace_problem(**eval_kwargs):
    return {"param": trace.node(0.0, name="x", trainable=True), "guide": Distance(),
            "train_dataset": {"inputs": [0], "infos": [2.0]}}
'''


def _root(tmp_path: Path, suite: str | None) -> Path:
    root = tmp_path / "mytasks"
    root.mkdir()
    (root / "reach_two.py").write_text(TASK, encoding="utf-8")
    if suite is not None:
        (root / "__init__.py").write_text(f'"""My tasks."""\nSUITE = "{suite}"\n', encoding="utf-8")
    return root


def _listed(root: Path, *flags: str) -> list[str]:
    proc = run_cli("list-tasks", "--root", str(root), "--format", "json", *flags, check=True)
    return [entry["task_id"] for entry in json.loads(proc.stdout)]


def test_a_task_directory_names_its_suite(tmp_path: Path) -> None:
    root = _root(tmp_path, "lab")
    assert _listed(root)[0] == "lab:reach_two"
    assert _listed(root, "--bench", "lab") == ["lab:reach_two"]
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [lab:reach_two]\ntrainers: [{id: MinibatchAlgorithm, num_steps: 2}]\n")
    proc = run_cli("run", "--config", str(config), "--root", str(root), "--runs-dir", str(tmp_path / "runs"),
                   "--quiet")
    assert proc.returncode == 0, proc.stderr
    [run] = list((tmp_path / "runs").iterdir())
    with open(run / "results.csv", encoding="utf-8") as handle:
        (row,) = list(csv.DictReader(handle))
    assert (row["task"], row["suite"], row["status"]) == ("lab:reach_two", "lab", "ok")
    bare = tmp_path / "bare.yaml"
    bare.write_text("tasks: [reach_two]\ntrainers: [NoOpTrainer]\n")
    refused = run_cli("validate", "--config", str(bare), "--root", str(root))
    assert refused.returncode == 2 and "lab:reach_two" in refused.stderr, refused.stderr


def test_without_a_suite_name_root_tasks_are_llm4ad(tmp_path: Path) -> None:
    assert "llm4ad:reach_two" in _listed(_root(tmp_path, None))


def test_a_suite_name_that_is_not_one_is_a_clear_error(tmp_path: Path) -> None:
    proc = run_cli("list-tasks", "--root", str(_root(tmp_path, "My Lab!")))
    assert proc.returncode == 2 and "is not a suite name" in proc.stderr

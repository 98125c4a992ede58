"""Extending a run never pools two tasks: a config that gives a task label the run holds other
eval_kwargs (the same run_id, or --force with an edited config), or that would name a task the run
holds by another label, is refused with exit 2 and a message that says why, and the run is left as it
was.  Before, the second config was admitted and both targets landed under one task label (seeds 1-3
twice), so the paired tests silently used half of each arm's jobs."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.conftest import run_cli
from trace_bench.runner.extend import pooled_tasks

CONFIG = """
mode: stub
run_id: pooled
seeds: [1]
tasks: {tasks}
trainers: [NoOpTrainer]
"""


def _config(folder: Path, name: str, tasks: str) -> str:
    path = folder / name
    path.write_text(CONFIG.format(tasks=tasks))
    return str(path)


def test_a_changed_task_under_an_existing_label_is_refused(tmp_path: Path) -> None:
    runs = str(tmp_path / "runs")
    first = _config(tmp_path, "a.yaml", "[{id: internal:numeric_param, eval_kwargs: {target: 3}}]")
    run_cli("run", "--config", first, "--runs-dir", runs, "--quiet", check=True)
    run = tmp_path / "runs" / "pooled"
    before = {name: (run / name).read_bytes() for name in ("meta/config.snapshot.yaml", "meta/manifest.json",
                                                           "results.csv")}
    changed = _config(tmp_path, "b.yaml", "[{id: internal:numeric_param, eval_kwargs: {target: 50}}]")
    for extra in ((), ("--force",)):
        proc = run_cli("run", "--config", changed, "--runs-dir", runs, "--quiet", *extra)
        assert proc.returncode == 2, proc.stderr
        assert ("task 'internal:numeric_param' is in the run with eval_kwargs {\"target\": 3}, and this config "
                "gives it {\"target\": 50}: two different tasks would be pooled under one label") in proc.stderr
        assert "Traceback" not in proc.stderr
        assert {name: (run / name).read_bytes() for name in before} == before, "the run is left as it was"
    both = _config(tmp_path, "c.yaml", "[{id: internal:numeric_param, eval_kwargs: {target: 3}}, "
                                       "{id: internal:numeric_param, eval_kwargs: {target: 50}}]")
    proc = run_cli("run", "--config", both, "--runs-dir", runs, "--quiet")
    assert proc.returncode == 2 and "is in the run as 'internal:numeric_param', and this config names it " \
        "'internal:numeric_param[target=3]'" in proc.stderr, proc.stderr


@dataclass(frozen=True)
class Cell:
    """What pooled_tasks reads of a job's specification."""

    task: str
    task_label: str
    eval_kwargs: dict[str, Any] = field(default_factory=dict)
    seed: int = 1


def _spec(task: str, label: str, eval_kwargs: dict[str, Any], seed: int = 1) -> Cell:
    return Cell(task, label, eval_kwargs, seed)


def test_pooled_tasks_admits_new_tasks_seeds_and_the_same_task() -> None:
    held = [_spec("s:t", "s:t", {"target": 3})]
    assert pooled_tasks(held, [_spec("s:t", "s:t", {"target": 3}, seed=2), _spec("s:u", "s:u", {})]) == []
    assert len(pooled_tasks(held, [_spec("s:t", "s:t", {"target": 5})])) == 1

"""fail_fast: after the first job that ends neither ok nor budget_exhausted, no new job starts."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.conftest import only_run_dir, run_cli
from tests.waiting import read_events

# Matrix order is tasks -> trainers -> variants -> seeds, and one worker runs them in that order:
# numeric_param x2 spend their budget (not a failure), non_trainable seed 1 fails, the rest waits.
CONFIG = """
tasks: [internal:numeric_param, internal:non_trainable, internal:multi_param]
trainers:
  - id: PrioritySearch
    ps_steps: 20
seeds: [1, 2]
budget: {llm_calls: 2}
max_workers: 1
"""


def _run(tmp_path: Path, fail_fast: bool) -> tuple[int, Path]:
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG + f"fail_fast: {str(fail_fast).lower()}\n")
    proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet")
    return proc.returncode, only_run_dir(tmp_path / "runs")


def _statuses(run: Path) -> dict[tuple[str, int], str]:
    manifest = json.loads((run / "meta" / "manifest.json").read_text())
    return {(job["task"], job["seed"]): job["status"] for job in manifest["jobs"]}


@pytest.mark.parametrize("fail_fast", [True, False])
def test_fail_fast_stops_scheduling_after_the_first_failure(tmp_path: Path, fail_fast: bool) -> None:
    code, run = _run(tmp_path, fail_fast)
    assert code == 1
    statuses = _statuses(run)
    assert statuses[("internal:numeric_param", 1)] == statuses[("internal:numeric_param", 2)] == "budget_exhausted"
    assert statuses[("internal:non_trainable", 1)] == "failed"
    later = [statuses[("internal:non_trainable", 2)], statuses[("internal:multi_param", 1)],
             statuses[("internal:multi_param", 2)]]
    with open(run / "results.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    finished = read_events(run / "events.jsonl")[-1]
    assert finished["type"] == "run_finished"
    if fail_fast:
        assert later == ["not_executed"] * 3
        assert len(rows) == 3 and finished["not_run"] == 3
        assert len(list((run / "jobs").glob("*/results.json"))) == 3, "the jobs after the failure never ran"
    else:
        assert later == ["failed", "budget_exhausted", "budget_exhausted"]
        assert len(rows) == 6 and finished["not_run"] == 0

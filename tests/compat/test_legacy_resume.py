"""The original Trace-Bench's resume flows: ``reused`` jobs, a run extended by a larger config,
``resume: failed`` on never-run jobs, and a job marked failed in its job_meta.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trace_bench._util.errors import ConfigError


def _run(tmp_path: Path, tasks: list[str], **extra: Any) -> Any:
    from trace_bench.config import RunConfig
    from trace_bench.runner import BenchRunner

    cfg = RunConfig.from_dict({"mode": "stub", "seeds": [1], "run_id": "grow", "tasks": tasks,
                               "trainers": [{"id": "NoOpTrainer"}], **extra})
    cfg.runs_dir = str(tmp_path / "runs")
    return BenchRunner(cfg).run()


def _manifest(tmp_path: Path) -> dict[str, Any]:
    return json.loads((tmp_path / "runs" / "grow" / "meta" / "manifest.json").read_text())


def _statuses(tmp_path: Path) -> dict[str, str]:
    return {j["task"]: j["status"] for j in _manifest(tmp_path)["jobs"]}


def test_finished_jobs_carried_over_are_reused(tmp_path: Path) -> None:
    first = _run(tmp_path, ["internal:numeric_param", "internal:multi_param"])
    again = _run(tmp_path, ["internal:numeric_param", "internal:multi_param"])
    assert set(_statuses(tmp_path).values()) == {"reused"}
    assert [r["started_at"] for r in again.results] == [r["started_at"] for r in first.results]
    assert {r["status"] for r in again.results} == {"ok"}  # the record keeps its own status
    summary = json.loads((tmp_path / "runs" / "grow" / "summary.json").read_text())
    assert summary["counts"] == {"ok": 2}


def test_a_larger_config_extends_the_run(tmp_path: Path) -> None:
    first = _run(tmp_path, ["internal:numeric_param"])
    one_hash = _manifest(tmp_path)["config_hash"]
    grown = _run(tmp_path, ["internal:numeric_param", "internal:multi_param"])
    assert _statuses(tmp_path) == {"internal:numeric_param": "reused", "internal:multi_param": "ok"}
    assert grown.results[0]["started_at"] == first.results[0]["started_at"] and len(grown.results) == 2
    manifest = _manifest(tmp_path)
    assert manifest["config_hashes"][0] == one_hash and len(manifest["config_hashes"]) == 2
    assert manifest["config_hash"] not in manifest["config_hashes"] and manifest["total_jobs"] == 2
    # the first config again: nothing runs, and the cell it lacks stays in the run
    again = _run(tmp_path, ["internal:numeric_param"])
    assert _statuses(tmp_path) == {"internal:numeric_param": "reused", "internal:multi_param": "reused"}
    assert len(again.results) == 2 and _manifest(tmp_path)["config_hash"] == manifest["config_hash"]
    rows = (tmp_path / "runs" / "grow" / "results.csv").read_text().splitlines()
    assert len(rows) == 3


def test_a_change_beyond_the_matrix_is_refused(tmp_path: Path) -> None:
    _run(tmp_path, ["internal:numeric_param"])
    with pytest.raises(ConfigError, match="different config.*only tasks, trainers and seeds"):
        _run(tmp_path, ["internal:numeric_param", "internal:multi_param"], budget={"llm_calls": 5})


def test_resume_failed_leaves_never_run_jobs_not_executed(tmp_path: Path) -> None:
    _run(tmp_path, ["internal:numeric_param"])
    second = _run(tmp_path, ["internal:numeric_param", "internal:multi_param"], resume="failed")
    assert _statuses(tmp_path) == {"internal:numeric_param": "reused", "internal:multi_param": "not_executed"}
    assert [r["task_id"] for r in second.results] == ["internal:numeric_param"]
    never = next(j["job_id"] for j in _manifest(tmp_path)["jobs"] if j["status"] == "not_executed")
    assert not (tmp_path / "runs" / "grow" / "jobs" / never / "results.json").exists()


def test_a_job_marked_failed_in_job_meta_runs_again(tmp_path: Path) -> None:
    first = _run(tmp_path, ["internal:numeric_param", "internal:multi_param"])
    marked = first.results[0]["job_id"]
    meta_path = tmp_path / "runs" / "grow" / "jobs" / marked / "job_meta.json"
    meta = json.loads(meta_path.read_text())
    assert meta["status"] == "ok"
    meta_path.write_text(json.dumps({**meta, "status": "failed"}))  # results.json still says ok
    again = _run(tmp_path, ["internal:numeric_param", "internal:multi_param"])
    statuses = {j["job_id"]: j["status"] for j in _manifest(tmp_path)["jobs"]}
    assert statuses[marked] == "ok" and set(statuses.values()) == {"ok", "reused"}
    assert again.results[0]["started_at"] != first.results[0]["started_at"]
    assert again.results[1]["started_at"] == first.results[1]["started_at"]
    assert json.loads(meta_path.read_text())["status"] == "ok"

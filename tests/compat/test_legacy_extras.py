"""Small public helpers of the original Trace-Bench that its scripts and notebooks import."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest


def test_openai_compatible_model_name() -> None:
    from trace_bench.llm import openai_compatible_model_name

    assert openai_compatible_model_name("openrouter/openai/gpt-4o-mini") == "openai/gpt-4o-mini"
    assert openai_compatible_model_name("gpt-4o-mini") == "gpt-4o-mini"
    with pytest.raises(TypeError, match="model must be a string"):
        openai_compatible_model_name(None)  # type: ignore[arg-type]


def _original_run(run_dir: Path) -> None:
    """A run directory as the original wrote it (files our records do not describe)."""
    (run_dir / "meta").mkdir(parents=True)
    (run_dir / "jobs" / "j1").mkdir(parents=True)
    (run_dir / "meta" / "config.snapshot.yaml").write_text("mode: stub\n")
    (run_dir / "meta" / "manifest.json").write_text(json.dumps({"run_id": run_dir.name, "generated_at": "g",
                                                                "jobs": []}))
    (run_dir / "summary.json").write_text(json.dumps({"counts": {"ok": 1, "failed": 1}, "total_jobs": 2}))
    (run_dir / "results.csv").write_text("job_id,task_id,status\nj1,internal:numeric_param,ok\n")
    (run_dir / "jobs" / "j1" / "job_meta.json").write_text(json.dumps({"job_id": "j1", "status": "ok"}))


def test_discover_runs_finds_nested_runs_and_reads_original_files(tmp_path: Path) -> None:
    from trace_bench.ui.discovery import discover_runs, load_job_details, load_run_summary

    root = tmp_path / "runs"
    _original_run(root / "2026" / "day1" / "r-old")
    _original_run(root / "r-top")
    (root / "r-top" / "jobs" / "inside" / "meta").mkdir(parents=True)  # a run's own tree is not searched
    runs = {r.run_id: r for r in discover_runs(root)}
    assert set(runs) == {"r-old", "r-top"}
    assert runs["r-old"].label == str(Path("2026") / "day1" / "r-old") and runs["r-old"].generated_at == "g"
    assert runs["r-top"].total_jobs == 2 and runs["r-top"].failure_rate == 0.5
    assert [r.run_id for r in discover_runs(root / "r-top")] == ["r-top"]
    summary = load_run_summary(runs["r-old"].run_dir)
    assert summary["summary"]["total_jobs"] == 2 and summary["results_rows"][0]["task_id"] == "internal:numeric_param"
    assert summary["leaderboard_rows"] == []
    job = load_job_details(runs["r-old"].run_dir, "j1")
    assert job["job_meta"]["status"] == "ok" and job["results"] == {} and job["stdout"] == ""


def test_mlflow_hooks_are_no_ops_unless_mlflow_is_configured(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from trace_bench.integrations import mlflow_client

    exported: list[tuple[Path, list[str]]] = []
    monkeypatch.setattr("trace_bench.trackers.export_run", lambda run_dir, trackers: exported.append((run_dir, trackers)))
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert mlflow_client.log_run_start(tmp_path, {}, {}, {}) is None
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "file:///nowhere")
    monkeypatch.setitem(sys.modules, "mlflow", None)  # not installed
    ctx = mlflow_client.log_run_start(tmp_path, {"mode": "stub"}, {}, {})
    assert ctx is None
    mlflow_client.log_job_result(ctx, {"job_id": "j"}, {"status": "ok"})
    mlflow_client.log_run_end(ctx, {"counts": {"ok": 1}})
    assert exported == []
    monkeypatch.setitem(sys.modules, "mlflow", type(sys)("mlflow"))  # installed
    ctx = mlflow_client.log_run_start(tmp_path)
    assert ctx is not None
    mlflow_client.log_run_end(ctx, {})
    assert exported == [(tmp_path, ["mlflow"])]

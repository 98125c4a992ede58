"""--resume on damaged run directories explains or repairs instead of crashing."""

from __future__ import annotations

import csv
from pathlib import Path

from tests.conftest import run_cli

CONFIG = "run_id: damaged\ntasks: [internal:numeric_param, internal:multi_param]\ntrainers: [NoOpTrainer]\n"


def _make_run(tmp_path: Path) -> Path:
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet", check=True)
    return tmp_path / "runs" / "damaged"


def test_truncated_job_results_are_rerun(tmp_path: Path) -> None:
    run = _make_run(tmp_path)
    victim = next((run / "jobs").iterdir())
    text = (victim / "results.json").read_text()
    (victim / "results.json").write_text(text[: len(text) // 2])
    (run / "results.csv").write_text("garbage,\n")
    (run / "meta" / "manifest.json").write_text("{\"jobs\": [")
    proc = run_cli("run", "--resume", str(run), "--quiet")
    assert proc.returncode == 0, proc.stderr
    rows = list(csv.DictReader(open(run / "results.csv")))
    assert len(rows) == 2 and all(r["status"] == "ok" for r in rows)


def test_truncated_snapshot_is_a_clear_error(tmp_path: Path) -> None:
    run = _make_run(tmp_path)
    (run / "meta" / "config.snapshot.yaml").write_text("tasks: [internal:numeric_param\n")
    proc = run_cli("run", "--resume", str(run))
    assert proc.returncode == 2
    assert "config.snapshot.yaml" in proc.stderr and "YAML syntax error" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_resume_of_a_non_run_directory(tmp_path: Path) -> None:
    (tmp_path / "runs" / "empty").mkdir(parents=True)
    proc = run_cli("run", "--resume", "empty", "--runs-dir", str(tmp_path / "runs"))
    assert proc.returncode == 2 and "no run 'empty'" in proc.stderr

"""validate and validate --strict."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import REPO, run_cli


def test_validate_ok() -> None:
    proc = run_cli("validate", "--config", str(REPO / "configs" / "m1_matrix_smoke.yaml"), check=True)
    assert "[OK] trainer PrioritySearch" in proc.stdout
    assert "[OK] matrix: 4 jobs" in proc.stdout


def test_validate_strict_builds_tasks_and_writes_manifest(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [internal:numeric_param, internal:non_trainable]\ntrainers: [NoOpTrainer]\nseeds: [1, 2]\n")
    proc = run_cli("validate", "--config", str(config), "--strict", "--runs-dir", str(tmp_path / "runs"), check=True)
    assert "[OK] internal:numeric_param" in proc.stdout
    assert "[EXPECTED] internal:non_trainable: no_trainable_parameters" in proc.stdout
    manifests = list((tmp_path / "runs").glob("*/meta/manifest.json"))
    assert len(manifests) == 1
    data = json.loads(manifests[0].read_text())
    assert len(data["jobs"]) == 4 and data["config_hash"]


def test_validate_strict_fails_on_broken_task(tmp_path: Path) -> None:
    root = tmp_path / "tasks"
    root.mkdir()
    (root / "broken.py").write_text("def build_trace_problem(**kw):\n    raise ValueError('no data here')\n")
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [broken]\ntrainers: [NoOpTrainer]\n")
    proc = run_cli("validate", "--config", str(config), "--root", str(root), "--strict",
                   "--runs-dir", str(tmp_path / "runs"))
    assert proc.returncode == 1
    assert "[FAIL] llm4ad:broken: task_load_error: ValueError: no data here" in proc.stdout

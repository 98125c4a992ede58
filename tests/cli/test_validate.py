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


def test_logger_override_and_max_workers_flags(tmp_path: Path) -> None:
    import json as _json

    config = tmp_path / "c.yaml"
    config.write_text("tasks: [internal:numeric_param]\ntrainers:\n  - id: PrioritySearch\n    ps_steps: 2\n")
    runs = tmp_path / "runs"
    run_cli("run", "--config", str(config), "--runs-dir", str(runs), "--logger", "none", "--max-workers", "3",
            "--quiet", check=True)
    run = next(runs.iterdir())
    manifest = _json.loads((run / "meta" / "manifest.json").read_text())
    assert manifest["jobs"][0]["resolved"]["logger"] == "none"
    started = _json.loads((run / "events.jsonl").read_text().splitlines()[0])
    assert started["type"] == "run_started" and started["max_workers"] == 3
    job = run / "jobs" / manifest["jobs"][0]["job_id"]
    assert "[Step" not in (job / "stdout.log").read_text()
    # the default logger writes step lines to the job's stdout.log; job ids do not depend on it
    runs2 = tmp_path / "runs2"
    run_cli("run", "--config", str(config), "--runs-dir", str(runs2), "--logger", "ConsoleLogger", "--quiet",
            check=True)
    run2 = next(runs2.iterdir())
    log = (run2 / "jobs" / manifest["jobs"][0]["job_id"] / "stdout.log").read_text()
    assert "[Step 1] score:" in log
    bad = run_cli("run", "--config", str(config), "--runs-dir", str(runs2), "--logger", "Consolelogerr")
    assert bad.returncode == 2 and "unknown logger" in bad.stderr and "did you mean 'ConsoleLogger'?" in bad.stderr


def test_validate_warns_when_api_key_env_names_an_unset_variable(tmp_path: Path) -> None:
    """A loopback endpoint may need no key, so the config is valid; the unset name is worth a word."""
    config = tmp_path / "c.yaml"
    config.write_text("mode: real\ntasks: [internal:numeric_param]\ntrainers: [NoOpTrainer]\n"
                      "llm: {base_url: 'http://127.0.0.1:9/v1', model: m, api_key_env: TB_UNSET_KEY_NAME}\n")
    proc = run_cli("validate", "--config", str(config), env={"TB_UNSET_KEY_NAME": None})
    assert proc.returncode == 0, proc.stderr
    assert "warning: llm.api_key_env names TB_UNSET_KEY_NAME, which is not set" in proc.stderr
    quiet = run_cli("validate", "--config", str(config), env={"TB_UNSET_KEY_NAME": "set"})
    assert quiet.returncode == 0 and "warning" not in quiet.stderr

"""``run --seeds/--set/--budget ...`` through the CLI, on the persisted run: the overrides change
the jobs and the config hash, the snapshot records them, a resume keeps them and refuses a new one
that would change the run."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import only_run_dir, run_cli
from trace_bench.config.loader import load_config
from trace_bench.matrix.identity import config_hash

CONFIG = "mode: stub\nseeds: [123]\ntasks: [internal:numeric_param]\ntrainers: [NoOpTrainer]\n"
OVERRIDES = ("--set", "budget.llm_calls=5", "--seeds", "1,2")


def _manifest(run: Path) -> dict:
    return json.loads((run / "meta" / "manifest.json").read_text(encoding="utf-8"))


def test_overrides_change_the_jobs_and_the_hash_and_a_resume_keeps_them(tmp_path: Path) -> None:
    config = tmp_path / "x.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    runs = tmp_path / "runs"
    run_cli("run", "--config", str(config), "--runs-dir", str(runs), "--quiet", *OVERRIDES, check=True)
    run = only_run_dir(runs)
    manifest = _manifest(run)
    plain = config_hash(load_config(config))
    assert manifest["config_hash"] != plain
    assert manifest["config_hash"] == config_hash(load_config(config, [("--set", "budget.llm_calls=5"),
                                                                     ("--seeds", "1,2")]))
    assert json.loads((run / "summary.json").read_text())["config_hash"] == manifest["config_hash"]
    assert sorted(job["seed"] for job in manifest["jobs"]) == [1, 2]
    assert all(job["budget"]["llm_calls"] == 5 for job in manifest["jobs"])
    snapshot = (run / "meta" / "config.snapshot.yaml").read_text(encoding="utf-8")
    assert "#   --set budget.llm_calls=5\n#   --seeds 1,2\n" in snapshot and f"from {config}" in snapshot
    job_ids = sorted(job["job_id"] for job in manifest["jobs"])

    refused = run_cli("run", "--resume", str(run), "--seeds", "1,2,3")
    assert refused.returncode == 2
    assert refused.stderr.startswith("trace-bench: error: --seeds 1,2,3: --resume continues run")
    assert "start a new run with it" in refused.stderr
    assert _manifest(run)["config_hash"] == manifest["config_hash"]

    # the original file without the overrides: the run's recorded ones apply again, nothing re-runs
    resumed = run_cli("run", "--resume", str(run), "--config", str(config), "--seeds", "1, 2", check=True)
    assert "jobs:        ok=2" in resumed.stdout
    again = _manifest(run)
    assert again["config_hash"] == manifest["config_hash"]
    assert sorted(job["job_id"] for job in again["jobs"]) == job_ids
    assert all(job["status"] == "reused" for job in again["jobs"])
    assert "#   --seeds 1,2\n" in (run / "meta" / "config.snapshot.yaml").read_text(encoding="utf-8")


def test_replay_refuses_overrides(tmp_path: Path) -> None:
    proc = run_cli("run", "--replay", "no-such-run", "--runs-dir", str(tmp_path), "--mode", "stub")
    assert proc.returncode == 2 and "--mode stub: --replay re-runs the recorded run's config" in proc.stderr

"""A real stub run through the CLI: artifacts, tables, identity, determinism, exit codes."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import yaml

from tests.conftest import REPO, only_run_dir, run_cli

SEED_TREE = [
    "meta/config.snapshot.yaml", "meta/manifest.json", "meta/env.json", "meta/git.json", "meta/files_index.json",
    "results.csv", "summary.json", "leaderboard.csv", "events.jsonl",
]
JOB_TREE = [
    "job_meta.json", "results.json", "events.jsonl", "stdout.log", "artifacts/initial_state.yaml",
    "artifacts/best_state.yaml", "artifacts/final_state.yaml", "artifacts/state_history.jsonl", "artifacts/curve.csv",
]
COLUMNS = ["task", "suite", "trainer", "params", "seed", "status", "score_initial", "score_final", "score_best",
           "score_test", "n_steps", "llm_calls", "prompt_tokens", "completion_tokens", "cost_usd", "time_seconds",
           "error"]


def _rows(run: Path) -> list[dict[str, str]]:
    with open(run / "results.csv", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_smoke_run_tree_and_improvement(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    proc = run_cli("run", "--config", str(REPO / "configs" / "smoke.yaml"), "--runs-dir", str(runs), check=True)
    run = only_run_dir(runs)
    assert f"Run complete: {run.name}" in proc.stdout and "Leaderboard" in proc.stdout
    for rel in SEED_TREE:
        assert (run / rel).is_file(), rel
    rows = _rows(run)
    assert len(rows) == 1
    for column in COLUMNS:
        assert column in rows[0]
    row = rows[0]
    assert row["status"] == "ok"
    assert float(row["score_best"]) > float(row["score_initial"])
    assert int(row["llm_calls"]) > 0 and int(row["prompt_tokens"]) > 0 and int(row["completion_tokens"]) > 0
    job = run / "jobs" / row["job_id"]
    for rel in JOB_TREE:
        assert (job / rel).is_file(), rel
    curve = list(csv.DictReader(open(job / "artifacts" / "curve.csv")))
    # the initial state, one row per step, and the final state at the job's total spend
    assert len(curve) == int(row["n_steps"]) + 2
    assert [r["kind"] for r in curve] == ["initial", *["step"] * int(row["n_steps"]), "final"]
    assert int(curve[-1]["llm_calls"]) == int(row["llm_calls"]) and float(curve[-1]["best_score"]) == \
        float(row["score_best"])
    summary = json.loads((run / "summary.json").read_text())
    assert len(summary["config_hash"]) == 64
    assert summary["token_totals"]["total"] == int(row["prompt_tokens"]) + int(row["completion_tokens"])
    assert isinstance(summary["token_totals"]["prompt"], int)
    manifest = json.loads((run / "meta" / "manifest.json").read_text())
    assert manifest["config_hash"] == summary["config_hash"]
    entry = manifest["jobs"][0]
    assert entry["raw_params"]["ps_steps"] == 1 and entry["resolved"]["trainer_kwargs"]["num_steps"] == 1
    env = json.loads((run / "meta" / "env.json").read_text())
    assert env["python"] and "trace-opt" in env["packages"] and "pydantic" in env["packages"]
    best = yaml.safe_load((job / "artifacts" / "best_state.yaml").read_text())
    assert best["score"] == float(row["score_best"])
    events = [json.loads(line) for line in (job / "events.jsonl").read_text().splitlines()]
    assert events[0]["type"] == "job_started" and events[-1]["type"] == "job_finished"
    assert all("ts" in e and "type" in e for e in events)
    assert sum(e["type"] == "step" for e in events) == int(row["n_steps"])
    index = json.loads((run / "meta" / "files_index.json").read_text())
    assert any(f["path"] == "results.csv" for f in index["files"])


def test_same_config_twice_same_hash_and_scores(tmp_path: Path) -> None:
    config = REPO / "configs" / "m1_matrix_smoke.yaml"
    a, b = tmp_path / "a", tmp_path / "b"
    run_cli("run", "--config", str(config), "--runs-dir", str(a), "--quiet", check=True)
    run_cli("run", "--config", str(config), "--runs-dir", str(b), "--quiet", check=True)
    ra, rb = only_run_dir(a), only_run_dir(b)
    sa, sb = (json.loads((r / "summary.json").read_text()) for r in (ra, rb))
    assert sa["config_hash"] == sb["config_hash"] and ra.name != rb.name
    strip = ("run_id", "time_seconds", "started_at", "finished_at")
    rows_a = [{k: v for k, v in r.items() if k not in strip} for r in _rows(ra)]
    rows_b = [{k: v for k, v in r.items() if k not in strip} for r in _rows(rb)]
    assert rows_a == rows_b and len(rows_a) == 4


def test_failed_job_exits_1_and_is_recorded(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [internal:non_trainable, internal:numeric_param]\ntrainers: [NoOpTrainer]\n")
    proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"))
    assert proc.returncode == 1
    rows = {r["task"]: r for r in _rows(only_run_dir(tmp_path / "runs"))}
    assert rows["internal:non_trainable"]["status"] == "failed"
    assert rows["internal:non_trainable"]["error"] == "no_trainable_parameters"
    assert rows["internal:numeric_param"]["status"] == "ok"
    board = list(csv.DictReader(open(only_run_dir(tmp_path / "runs") / "leaderboard.csv")))
    failed_row = [r for r in board if r["task"] == "internal:non_trainable"][0]
    assert failed_row["count"] == "0" and failed_row["failed"] == "1"


def test_seeds_give_different_but_reproducible_curves(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [internal:numeric_param]\ntrainers:\n  - id: PrioritySearch\n    ps_steps: 3\n    ps_candidates: 2\n    ps_proposals: 2\n"
                      "seeds: [1, 2, 3]\nmax_workers: 2\n")
    run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet", check=True)
    run = only_run_dir(tmp_path / "runs")
    curves = {}
    for row in _rows(run):
        curve = list(csv.DictReader(open(run / "jobs" / row["job_id"] / "artifacts" / "curve.csv")))
        curves[row["seed"]] = [c["score"] for c in curve]
    assert len(set(map(tuple, curves.values()))) > 1

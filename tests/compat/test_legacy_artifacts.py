"""The original Trace-Bench's run artifacts, next to ours: job_meta.json's ``status``, ``raw_params``
and ``resolved_*``, the manifest's flat ``resolved_*``, ``tb/``, ``*_state.json`` and its
results.csv columns appended after ours."""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import yaml

from trace_bench.store.models import CSV_COLUMNS, LEGACY_CSV_COLUMNS, RESOLVED_FIELDS


def _run(tmp_path: Path) -> Path:
    from trace_bench.config import RunConfig
    from trace_bench.runner import BenchRunner

    cfg = RunConfig.from_dict({"mode": "stub", "seeds": [123], "tasks": [{"id": "internal:numeric_param"}],
                               "trainers": [{"id": "PrioritySearch", "params_variants": [{"threads": 3, "ps_steps": 1}],
                                             "optimizer_kwargs": {"memory_size": 2}}]})
    cfg.runs_dir = str(tmp_path / "runs")
    summary = BenchRunner(cfg).run()
    return Path(cfg.runs_dir) / summary.run_id


def test_job_meta_manifest_and_results_agree_on_the_original_fields(tmp_path: Path) -> None:
    run = _run(tmp_path)
    job = next((run / "jobs").iterdir())
    meta = json.loads((job / "job_meta.json").read_text())
    result = json.loads((job / "results.json").read_text())
    entry = json.loads((run / "meta" / "manifest.json").read_text())["jobs"][0]
    assert meta["status"] == result["status"] == entry["status"] == "ok"
    assert meta["raw_params"] == entry["raw_params"] == {"threads": 3, "ps_steps": 1}
    for name in RESOLVED_FIELDS:
        assert meta[name] == result[name] == entry[name], name
    assert meta["resolved_trainer_kwargs"]["num_threads"] == 3 and meta["resolved_optimizer"] == "OptoPrime"
    # the task's own optimizer kwargs, updated with the config's
    assert meta["resolved_optimizer_kwargs"]["memory_size"] == 2 and "objective" in meta["resolved_optimizer_kwargs"]
    assert meta["resolved_guide"].endswith("DistanceGuide")
    assert (job / "tb").is_dir()
    for kind in ("initial", "best", "final"):
        as_json = json.loads((job / "artifacts" / f"{kind}_state.json").read_text())
        assert as_json == yaml.safe_load((job / "artifacts" / f"{kind}_state.yaml").read_text())
    for path in run.rglob("*"):
        if path.name == "transcript.jsonl":  # the prompts as sent, where opto prints reprs: no address kept
            assert re.search(r" at 0x[0-9a-fA-F]", path.read_text()) is None
        elif path.suffix in {".json", ".jsonl", ".csv"}:
            assert "object at 0x" not in path.read_text()


def test_results_csv_keeps_our_columns_and_appends_the_originals(tmp_path: Path) -> None:
    run = _run(tmp_path)
    with (run / "results.csv").open(encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        header, rows = list(reader.fieldnames or []), list(reader)
    assert header[:len(CSV_COLUMNS)] == list(CSV_COLUMNS)
    assert header[-len(LEGACY_CSV_COLUMNS):] == list(LEGACY_CSV_COLUMNS)
    assert not set(LEGACY_CSV_COLUMNS) & set(CSV_COLUMNS)  # added, never a rename of ours
    row = rows[0]
    assert (row["task_id"], row["trainer_id"]) == (row["task"], row["trainer"])
    assert (row["score_val_initial"], row["score_val_final"], row["score_val"]) == (
        row["score_initial"], row["score_final"], row["score_best"])
    assert row["feedback"] == row["error"] == "" and row["llm_provider"] == "stub"
    assert json.loads(row["resolved_trainer_kwargs"])["num_threads"] == 3
    assert "objective" in json.loads(row["resolved_optimizer_kwargs"]) and json.loads(row["eval_kwargs"]) == {}
    job_id = row["job_id"]
    assert row["tb_logdir"] == f"jobs/{job_id}/tb" and (run / row["best_state_path"]).is_file()
    assert (run / row["state_history_path"]).is_file() and row["token_scope"] == "all_roles"


def test_old_helpers_of_the_runner_answer() -> None:
    from trace_bench.runner import _select_best_state, _state_rel_paths, _token_scope_note

    assert _state_rel_paths("j1")["final_state_path"] == "jobs/j1/artifacts/final_state.yaml"
    assert _select_best_state("a", "b", 1.0, 2.0) == "b" and _select_best_state("a", "b", 2.0, 1.0) == "a"
    assert _select_best_state("a", "b", 1.0, 1.0) == "a" and _select_best_state("a", "b", None, 0.5) == "b"
    assert _token_scope_note() == "all_roles"  # our token columns count every role's calls


def test_build_leaderboard_rows_keeps_the_best_ok_row_per_trainer() -> None:
    from trace_bench.results import build_leaderboard_rows

    rows = [
        {"task_id": "t1", "suite": "s", "job_id": "j1", "trainer_id": "A", "status": "failed", "score_val": 9.0},
        {"task_id": "t1", "suite": "s", "job_id": "j2", "trainer_id": "A", "status": "ok", "score_val": 1.0},
        {"task_id": "t1", "suite": "s", "job_id": "j3", "trainer_id": "A", "status": "ok", "score_val": 3.0},
        {"task_id": "t1", "suite": "s", "job_id": "j4", "trainer_id": "B", "status": "ok", "score_val": 2.0},
        {"task_id": "t0", "suite": "s", "job_id": "j5", "trainer_id": "B", "status": "ok", "score_best": 0.5},
    ]
    board = build_leaderboard_rows(rows)
    assert [(r["task_id"], r["job_id"], r["rank"]) for r in board] == [("t0", "j5", 1), ("t1", "j3", 1),
                                                                         ("t1", "j4", 2)]

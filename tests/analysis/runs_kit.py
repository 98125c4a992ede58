"""Synthetic run directories in the runner's exact on-disk format (docs/artifacts.md), so analysis
tests control every score while reading files the way they read a real run."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path
from typing import Any

import yaml

from trace_bench.store.models import CSV_COLUMNS, CURVE_COLUMNS


def cell_job_id(job: dict[str, Any], llm_model: str) -> str:
    """Like the runner's ids: the LLM identity is part of it, so ids differ across LLMs."""
    key = json.dumps([job["task"], job["trainer"], job.get("params_label", "default"), job["seed"], llm_model])
    return hashlib.sha256(key.encode()).hexdigest()[:12]


def job(task: str, trainer: str, seed: int, score: float | None, **fields: Any) -> dict[str, Any]:
    return {"task": task, "trainer": trainer, "seed": seed, "score_best": score, **fields}


def make_run(root: Path, name: str, jobs: list[dict[str, Any]], *, mode: str = "real", model: str = "m1",
             curve_steps: int = 3, calls_per_step: int = 2, extra_columns: tuple[str, ...] = ()) -> Path:
    """Write ``root/name`` with meta files, results.csv and per-job results.json, events.jsonl and
    curve.csv.  Each job's curve climbs from ``score_initial`` (default 0) to its best score."""
    run = root / name
    (run / "meta").mkdir(parents=True)
    rows, entries = [], []
    for index, spec in enumerate(jobs):
        label = spec.get("params_label", "default")
        job_id = spec.get("job_id") or cell_job_id(spec, model)
        row = {"run_id": name, "job_id": job_id, "suite": spec["task"].split(":")[0], "params": "{}",
               "params_label": label, "mode": mode, "llm_model": model, "status": "ok", "error": "",
               "score_initial": 0.0, "selection_split": "train", "n_steps": curve_steps, "n_evals": curve_steps + 1,
               "llm_calls": curve_steps * calls_per_step, "cache_hits": 0, "prompt_tokens": 100 * curve_steps,
               "completion_tokens": 10 * curve_steps, "total_tokens": 110 * curve_steps, "tokens_estimated": False,
               "cost_usd": 0.001 * curve_steps, "time_seconds": 1.5, "started_at": "2026-01-01T00:00:00Z",
               "finished_at": "2026-01-01T00:00:02Z", **spec}
        row["score_best"] = "" if spec["score_best"] is None else spec["score_best"]
        rows.append(row)
        entries.append({"job_id": job_id, "index": index, "task": spec["task"], "suite": row["suite"],
                        "trainer": spec["trainer"], "params": {}, "params_label": label, "seed": spec["seed"],
                        "eval_kwargs": {}, "resolved": {"trainer_kwargs": {}, "optimizer": "OptoPrime",
                                                        "optimizer_kwargs": {}}})
        _write_job(run / "jobs" / job_id, row, curve_steps, calls_per_step, model)
    llm = {"model": model, "provider": "openai"} if mode == "real" else {}
    manifest = {"schema_version": 1, "run_id": name, "config_hash": "0" * 64, "created_at": "2026-01-01T00:00:00Z",
                "mode": mode, "llm": llm, "jobs": entries}
    (run / "meta" / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    snapshot = {"mode": mode, "seeds": sorted({j["seed"] for j in jobs}), "llm": llm,
                "tasks": [{"id": t} for t in sorted({j["task"] for j in jobs})],
                "trainers": [{"id": t} for t in sorted({j["trainer"] for j in jobs})]}
    (run / "meta" / "config.snapshot.yaml").write_text(yaml.safe_dump(snapshot), encoding="utf-8")
    with open(run / "results.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.DictWriter(handle, fieldnames=[*CSV_COLUMNS, *extra_columns], extrasaction="ignore")
        writer.writeheader()
        writer.writerows(rows)
    return run


def _write_job(job_dir: Path, row: dict[str, Any], steps: int, calls_per_step: int, model: str) -> None:
    artifacts = job_dir / "artifacts"
    artifacts.mkdir(parents=True)
    (job_dir / "results.json").write_text(json.dumps({"schema_version": 1, **row, "score_dict_best": {}}))
    best = row["score_best"]
    start = float(row["score_initial"] or 0.0)
    events = [{"ts": "2026-01-01T00:00:00Z", "type": "job_started", "job_id": row["job_id"]}]
    if best == "" or row["status"] not in ("ok", "budget_exhausted"):
        (job_dir / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
        return
    with open(artifacts / "curve.csv", "w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(CURVE_COLUMNS)
        for step in range(steps + 1):
            score = start + (float(best) - start) * step / max(steps, 1)
            calls = step * calls_per_step
            writer.writerow([step, 0.5 * step, step + 1, calls, 55 * calls, 0.0005 * calls, score, score, step + 1,
                             40 * (step + 1), 0.0, "initial" if step == 0 else "step"])
    for step in range(1, steps + 1):
        for _ in range(calls_per_step):
            events.append({"ts": "2026-01-01T00:00:01Z", "type": "llm_call", "role": "optimizer", "model": model,
                           "prompt_tokens": 50, "completion_tokens": 5, "cost_usd": 0.0005, "latency_s": 0.2,
                           "cached": False, "retries": 0, "error": None})
        events.append({"ts": "2026-01-01T00:00:01Z", "type": "step", "step": step})
    events.append({"ts": "2026-01-01T00:00:02Z", "type": "job_finished", "status": row["status"]})
    (job_dir / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))

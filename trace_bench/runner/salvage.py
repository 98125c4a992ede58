"""Records for jobs that did not report (killed on timeout, out of memory, crashed, interrupted).

What a job writes as it goes (curve.csv, events.jsonl, best_state.yaml) is enough to keep its
best-so-far result and the LLM spend so far, so a killed job is still a useful row.
"""

from __future__ import annotations

import csv
from typing import Any

from trace_bench.matrix.expand import JobSpec
from trace_bench.store.events import read_events, utc_now
from trace_bench.store.run_dir import JobPaths
from trace_bench.store.schemas import JobResult


def _float(value: str | None) -> float | None:
    try:
        return float(value) if value not in (None, "") else None
    except ValueError:
        return None


def spent_from_events(paths: JobPaths) -> dict[str, float]:
    """LLM spend recorded in a job's events (training phase only, cache answers included, like the
    budget counts it)."""
    calls = tokens = 0
    usd = 0.0
    for event in read_events(paths.events):
        if event.get("type") == "llm_call" and not event.get("error") and event.get("phase", "train") == "train":
            calls += 1
            tokens += int(event.get("total_tokens") or 0)
            usd += float(event.get("cost_usd") or 0.0)
    return {"llm_calls": calls, "tokens": tokens, "usd": usd}


def salvage_record(spec: JobSpec, paths: JobPaths, *, run_id: str, status: str, error: str, wall_s: float,
                   attempt: int, carried: dict[str, float] | None = None) -> JobResult:
    record = JobResult(run_id=run_id, job_id=spec.job_id, task=spec.task, suite=spec.suite, trainer=spec.trainer,
                       params=spec.params, params_label=spec.params_label, seed=spec.seed, mode=spec.mode,
                       llm_model=str(spec.llm_identity.get("model") or spec.mode), status=status, error=error,
                       time_seconds=round(wall_s, 6), finished_at=utc_now(), attempt=attempt)
    rows: list[dict[str, Any]] = []
    try:
        with open(paths.curve, encoding="utf-8") as handle:
            rows = [r for r in csv.DictReader(handle) if r.get("step") not in (None, "")]
    except (OSError, csv.Error):
        rows = []
    if rows:
        record.score_initial = _float(rows[0].get("score"))
        record.score_final = _float(rows[-1].get("score"))
        bests = [b for b in (_float(r.get("best_score")) for r in rows) if b is not None]
        record.score_best = max(bests) if bests else None
        try:
            record.n_steps = int(rows[-1]["step"])
        except (KeyError, ValueError):
            record.n_steps = 0
    calls = prompt = completion = total = 0
    cost = 0.0
    for event in read_events(paths.events):
        if event.get("type") == "llm_call" and not event.get("error"):
            record.cache_hits += int(bool(event.get("cached")))
            calls += 1
            prompt += int(event.get("prompt_tokens") or 0)
            completion += int(event.get("completion_tokens") or 0)
            total += int(event.get("total_tokens") or 0)
            cost += float(event.get("cost_usd") or 0.0)
        elif event.get("type") == "job_started" and not record.started_at:
            record.started_at = str(event.get("ts", ""))
    record.llm_calls, record.prompt_tokens, record.completion_tokens, record.total_tokens = calls, prompt, completion, total
    record.cost_usd = round(cost, 10)
    spent = spent_from_events(paths)
    carried = carried or {}
    record.budget_spent = {k: spent.get(k, 0) + carried.get(k, 0) for k in ("llm_calls", "tokens", "usd")}
    return record

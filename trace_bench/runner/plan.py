"""Which jobs a run (or a resumed run) executes, and what each re-run carries over."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from typing import Literal

from trace_bench.matrix.expand import JobSpec
from trace_bench.runner.salvage import spent_from_events
from trace_bench.store.atomic import read_json, write_json
from trace_bench.store.run_dir import JobPaths, RunPaths
from trace_bench.store.schemas import JobResult
from trace_bench.store.tables import load_job_record

ResumeMode = Literal["auto", "failed", "none"]
COMPLETE = frozenset({"ok", "budget_exhausted", "skipped"})
SUCCESS = frozenset({"ok", "budget_exhausted"})


@dataclass
class PlannedJob:
    spec: JobSpec
    paths: JobPaths
    previous: JobResult | None
    run: bool
    attempt: int = 1
    carried: dict[str, float] | None = None


def should_run(previous: JobResult | None, mode: ResumeMode) -> bool:
    if previous is not None and previous.status == "skipped" and mode != "failed":
        return True  # skipped because its task was unavailable; it may be available now
    if mode == "none":
        return True
    if mode == "failed":  # only jobs that ran and did not complete (the original's semantics)
        return previous is not None and previous.status not in COMPLETE
    return previous is None or previous.status not in COMPLETE


def plan_jobs(jobs: list[JobSpec], paths: RunPaths, mode: ResumeMode) -> list[PlannedJob]:
    planned = []
    for spec in jobs:
        job_paths = paths.job(spec.job_id)
        previous = load_job_record(job_paths.results)
        planned.append(PlannedJob(spec, job_paths, previous, should_run(previous, mode)))
        if spec.skip_reason and planned[-1].run:
            planned[-1].run = False  # recorded as skipped by the runner, never executed
            planned[-1].previous = None
    return planned


def prepare_attempt(job: PlannedJob, *, fresh: bool) -> None:
    """Carry the budget an interrupted or failed attempt already spent, then clear the job dir.

    The ledger (``attempts.json``) survives; everything else of the old attempt is removed, so a
    re-run never leaves stale curves, states or events behind.
    """
    root = job.paths.root
    ledger: dict = {"attempts": 0, "carried": {"llm_calls": 0, "tokens": 0, "usd": 0.0}}
    if not fresh and job.paths.ledger.exists():
        try:
            ledger = read_json(job.paths.ledger)
        except (OSError, ValueError):
            pass
    carried = dict(ledger.get("carried") or {})
    if not fresh and root.exists():
        spent = spent_from_events(job.paths)
        for key, value in spent.items():
            carried[key] = carried.get(key, 0) + value
    attempts = int(ledger.get("attempts", 0)) + 1 if not fresh else 1
    if root.exists():
        for child in root.iterdir():
            if child.name == job.paths.ledger.name:
                continue
            if child.is_dir():
                shutil.rmtree(child, ignore_errors=True)
            else:
                child.unlink(missing_ok=True)
    root.mkdir(parents=True, exist_ok=True)
    write_json(job.paths.ledger, {"attempts": attempts, "carried": carried}, durable=True)
    job.attempt = attempts
    job.carried = carried

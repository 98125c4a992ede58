"""Which jobs a run (or a resumed run) executes, and what each re-run carries over."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from trace_bench.runner.salvage import spent_in_training, spent_measuring
from trace_bench.store.job_store import JobStore
from trace_bench.store.models import Attempts, JobResult, JobSpec, Spend, StoreError
from trace_bench.store.results_index import IndexedResult, LazyResult
from trace_bench.store.run_store import RunStore
from trace_bench.store.status import COMPLETE, Status

ResumeMode = Literal["auto", "failed", "none"]


@dataclass
class PlannedJob:
    spec: JobSpec
    job: JobStore
    previous: JobResult | LazyResult | None
    run: bool
    attempt: int = 1
    carried: Spend | None = None
    carried_measure: Spend | None = None


def should_run(previous: JobResult | LazyResult | None, mode: ResumeMode, status: str | None = None) -> bool:
    """Whether a job runs again; ``status``: the one to decide on when it is not the record's
    (see :func:`recorded_status`)."""
    status = status if status is not None else (None if previous is None else str(previous.status))
    if status == Status.SKIPPED and mode != "failed":
        return True  # skipped because its task was unavailable; it may be available now
    if mode == "none":
        return True
    if mode == "failed":  # only jobs that ran and did not complete (the original's semantics)
        return previous is not None and status not in COMPLETE
    return previous is None or status not in COMPLETE


def recorded_status(job: JobStore, previous: JobResult | None) -> str | None:
    """The status resume decides on: the record's, unless job_meta.json names an incomplete one.

    The driver writes the outcome to job_meta.json just before results.json, so the two agree
    unless someone marked the job by hand, as the original Trace-Bench let its users do (its
    resume read job_meta.json first): a job marked ``failed`` there runs again.
    """
    if previous is None:
        return None
    try:
        meta = job.read_meta()
    except StoreError:
        meta = None
    if meta is not None and meta.status and meta.status not in COMPLETE:
        return meta.status
    return str(previous.status)


@dataclass
class Plan:
    """The planned jobs, and whether the results index answered for every recorded one (when it
    did not, the driver rewrites it)."""

    jobs: list[PlannedJob]
    index_complete: bool


def _previous(spec: JobSpec, job: JobStore, indexed: IndexedResult | None,
              mode: ResumeMode) -> tuple[JobResult | LazyResult | None, str | None, bool]:
    """(record, status resume decides on, whether the index answered)."""
    if indexed is not None and indexed.current(job):
        return indexed.result(spec), indexed.status, True
    previous = job.result_or_none()
    return previous, recorded_status(job, previous) if mode != "none" else None, previous is None


def plan_jobs(jobs: list[JobSpec], run: RunStore, mode: ResumeMode) -> Plan:
    """Per job: its previous record (from the results index while it matches the job's files,
    else from the files) and whether it runs."""
    index = run.results_index.read() if mode != "none" else {}
    planned = []
    complete = True
    for spec in jobs:
        job = run.job(spec.job_id)
        previous, status, answered = _previous(spec, job, index.get(spec.job_id), mode)
        complete = complete and answered
        if mode == "none":
            status = None
        planned.append(PlannedJob(spec, job, previous, should_run(previous, mode, status)))
        if spec.skip_reason and planned[-1].run:
            planned[-1].run = False  # recorded as skipped by the runner, never executed
            planned[-1].previous = None
    return Plan(planned, complete)


def prepare_attempt(planned: PlannedJob, *, fresh: bool) -> None:
    """Carry the budget an interrupted or failed attempt already spent (and, apart, the measurement
    calls it made: billed, counted by no budget), then clear the job dir.

    The ledger (``attempts.json``) survives; everything else of the old attempt is removed, so a
    re-run never leaves stale curves, states or events behind.
    """
    job = planned.job
    ledger = (None if fresh else job.read_attempts()) or Attempts()
    carried, carried_measure = ledger.carried, ledger.carried_measure
    if not fresh and job.exists():
        carried = carried.plus(spent_in_training(job))
        carried_measure = carried_measure.plus(spent_measuring(job))
    attempts = ledger.attempts + 1 if not fresh else 1
    job.clear_for_attempt()
    job.write_attempts(Attempts(attempts=attempts, carried=carried, carried_measure=carried_measure))
    planned.attempt = attempts
    planned.carried = carried
    planned.carried_measure = carried_measure

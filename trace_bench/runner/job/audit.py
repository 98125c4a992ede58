"""The job's integrity audit, inside the job process: sandbox denials as they happen, leakage at the end.

While the job runs, every boundary a sandboxed call ran into (:mod:`trace_bench.sandbox.denials`) is
written to the job's ``events.jsonl`` as a ``sandbox_denial`` event.  When the job ends (ok or not,
as long as its problem was built), its best and final states, as written to ``artifacts/``, are
searched for the test and validation splits' inputs and reference answers
(:mod:`trace_bench.integrity.leakage`); the result goes to ``artifacts/integrity.json`` and the
record's ``leaked_test_items``, ``leaked_validation_items``, ``sandbox_denials`` and
``sandbox_denial_kinds``.  The audit never changes a job's status or score: an error in it is
written to ``integrity.json`` and leaves the leak counts null.
"""

from __future__ import annotations

from typing import Any

from trace_bench.integrity import scan_states
from trace_bench.sandbox import denials
from trace_bench.store.events import EventLog
from trace_bench.store.job_store import JobStore
from trace_bench.store.models import IntegrityReport, JobResult, LeakFinding, SandboxDenial, StoreError

AUDITED_STATES = ("best", "final")


class DenialWatch:
    """Writes each sandbox denial of this process to the job's event log until :meth:`close`."""

    def __init__(self, events: EventLog) -> None:
        self._events = events
        self._stop = denials.listen(self._write)

    def _write(self, denial: denials.Denial) -> None:
        self._events.write(SandboxDenial(kind=denial.kind, target=denial.target, status=denial.status,
                                         caught=denial.caught, detail=denial.detail, count=denial.count))

    def close(self) -> None:
        self._stop()


def _state(job: JobStore, kind: str) -> list[tuple[str, Any]] | None:
    state = job.read_state(kind)
    if state is None:
        return None
    return [(str(p.name or f"parameter {p.index}"), p.value) for p in state.parameters]


def audit_job(job: JobStore, problem: Any | None, result: JobResult) -> None:
    """Fill ``result``'s integrity fields and write ``integrity.json`` (never raises)."""
    kinds = denials.counts()
    result.sandbox_denials = sum(kinds.values())
    result.sandbox_denial_kinds = kinds
    report = IntegrityReport(sandbox_denials=kinds)
    if problem is None:
        report.error = "the job ended before its problem was built: nothing to search"
    else:
        try:
            states = {kind: state for kind in AUDITED_STATES if (state := _state(job, kind)) is not None}
            scan = scan_states(states, {"test": problem.test_dataset, "validation": problem.validate_dataset},
                               initial=_state(job, "initial") or [], train=problem.train_dataset)
            report = report.model_copy(update={
                "searched": scan.searched, "shared_with_train": scan.shared_with_train, "leaked": scan.leaked,
                "findings": [LeakFinding(**vars(f)) for f in scan.findings], "more_findings": scan.more_findings,
                "states": sorted(states)})
            if states:
                result.leaked_test_items = scan.leaked_count("test")
                result.leaked_validation_items = scan.leaked_count("validation")
        except (StoreError, ValueError, TypeError, RecursionError, MemoryError) as exc:
            report.error = f"{type(exc).__name__}: {exc}"[:500]
    try:
        job.write_integrity(report)
    except OSError:
        pass

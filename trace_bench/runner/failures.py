"""How a job's failures become statuses: failures are data, recorded, never raised through the matrix."""

from __future__ import annotations

from trace_bench.store.status import Status


class JobFailure(Exception):
    """A job-level failure with a given status (e.g. ``skipped`` when a task is not implemented)."""

    def __init__(self, status: Status, message: str) -> None:
        super().__init__(message)
        self.status = status


def status_of(exc: BaseException) -> Status:
    """Exceptions may name their job status (e.g. a suite's InfraError -> ``infra_error``)."""
    status = getattr(exc, "job_status", None)
    try:
        return Status(status) if isinstance(status, str) and status else Status.FAILED
    except ValueError:
        return Status.FAILED

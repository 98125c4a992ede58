"""How a job's failures become statuses: failures are data, recorded, never raised through the matrix."""

from __future__ import annotations

import os
import traceback

from trace_bench._util.errors import TraceBenchError
from trace_bench.store.status import Status


class JobFailure(TraceBenchError):
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


def exception_text(exc: BaseException) -> str:
    """``Type: message`` of an exception for a job's ``error``; an exception without a message (a bare
    ``assert`` in a library) names where it was raised instead (``AssertionError (no message) at
    graph_propagator.py:147 in aggregate``), so the error says something before the traceback is read."""
    message = str(exc)
    if message.strip():
        return f"{type(exc).__name__}: {message}"
    frames = traceback.extract_tb(exc.__traceback__)
    if not frames:
        return f"{type(exc).__name__} (no message)"
    last = frames[-1]
    return f"{type(exc).__name__} (no message) at {os.path.basename(last.filename)}:{last.lineno} in {last.name}"

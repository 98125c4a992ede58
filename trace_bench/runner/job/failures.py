"""How a job's failures become its error: failures are data (a :class:`JobError` on its record),
recorded, never raised through the matrix."""

from __future__ import annotations

import os
import traceback

from trace_bench._util.errors import TraceBenchError
from trace_bench.store.models import JobError, declared_status
from trace_bench.store.models.error import Phase
from trace_bench.store.status import Status

#: the error of a job whose process ran out of the memory its limit allows
OUT_OF_MEMORY = "out of memory (job_memory_mb limit reached)"


class JobFailure(TraceBenchError):
    """A job-level failure with a given status (e.g. ``skipped`` when a task is not implemented)."""

    def __init__(self, status: Status, message: str) -> None:
        super().__init__(message)
        self.status = status


def status_of(exc: BaseException, default: Status = Status.FAILED) -> Status:
    """The status a failure gives its job: the one the exception names (a suite's InfraError:
    ``infra_error``), else ``default``."""
    return declared_status(exc) or default


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


def formatted(exc: BaseException) -> str:
    """The exception's traceback as ``traceback.format_exc`` prints it while it is handled."""
    return "".join(traceback.format_exception(exc))


def error_of(exc: Exception, phase: Phase) -> JobError:
    """The error a job ends with when ``exc`` escapes its body in ``phase``: a :class:`JobFailure`
    as it says (its cause's type), memory exhaustion as ``oom``, anything else with the status it
    names (else ``failed``) and ``Type: message`` (``task_error: message`` for a task's failure),
    with its traceback (a broken guide's own: the harness's frames add nothing)."""
    if isinstance(exc, JobFailure):
        cause = exc.__cause__ or exc.__context__
        return JobError(status=exc.status, type=type(cause).__name__ if cause is not None else "JobFailure",
                        message=str(exc), traceback=formatted(exc), phase=phase)
    if isinstance(exc, MemoryError):
        return JobError(status=Status.OOM, type="MemoryError", message=OUT_OF_MEMORY, traceback=formatted(exc),
                        phase=phase)
    status = status_of(exc)
    prefix = f"{status}: " if status == Status.TASK_ERROR else f"{type(exc).__name__}: "
    return JobError(status=status, type=type(exc).__name__, message=f"{prefix}{exc}",
                    traceback=getattr(exc, "traceback_text", "") or formatted(exc), phase=phase)

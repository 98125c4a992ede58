"""Why a job ended other than ``ok``, as data: :class:`JobError` (inspect_ai's ``EvalError``: a
model on the log, never a status recovered from a string prefix).

A job's record carries one (``JobResult.job_error``), or none for a job that ended ``ok``; its
status derives from it (:attr:`JobError.status`), in one place, the live handle that builds the
record (``trace_bench.store.live_result.LiveResult``).  ``message`` is the line a user reads first
(results.csv's ``error`` column, the console, ``job_finished``); ``type``, ``phase`` and
``traceback`` say where it came from.  The status an exception itself names (``job_status``, see
``trace_bench.TraceBenchError``) is read in one place too: :func:`declared_status`.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from trace_bench.store.status import Status

#: where in a job's life it failed: ``plan`` (never ran: the driver recorded it, a task unavailable
#: here), ``setup`` (the job process: its LLM session, the task's problem, its parameters),
#: ``train`` (the initial measurement and the trainer), ``finalise`` (the harness measuring the final
#: and best states), ``process`` (the driver's verdict on a job process it killed or lost), or empty
#: (a record written before errors were typed, whose text did not say)
Phase = Literal["plan", "setup", "train", "finalise", "process", ""]


class JobError(BaseModel):
    """How and why a job failed, or stopped (a budget), or was skipped."""

    model_config = ConfigDict(frozen=True, extra="allow")

    status: Status = Field(description="the status the job ends with")
    type: str = Field(default="", description="class of the exception that ended it (of its cause, for a failure "
                      "the harness wraps, such as a task that could not be built); empty for the driver's verdict "
                      "on a process (a timeout, a lost worker) and for a skip")
    message: str = Field(description="what a user reads first: results.csv's `error` column")
    traceback: str = Field(default="", description="the exception's traceback (a broken guide's own; for a killed "
                           "job, the last lines of its stdout.log)")
    phase: Phase = Field(default="", description="where in the job's life: plan, setup, train, finalise, process")


def declared_status(exc: BaseException) -> Status | None:
    """The status an exception names for the job it ends (``job_status``: a ``TraceBenchError``'s,
    or a task author's own exception's); None when it names none, or no known status."""
    status = getattr(exc, "job_status", None)
    if not isinstance(status, str) or not status:
        return None
    try:
        return Status(status)
    except ValueError:
        return None


#: the prefixes of an error's text before errors were typed, and the phase each says
_PHASE_OF_PREFIX = {"task_load_error": "setup", "task_not_implemented": "setup", "training_error": "train",
                    "task_error": "train", "budget exhausted": "train", "job_timeout": "process",
                    "killed (signal": "process", "worker lost": "process", "interrupted by the user": "process",
                    "task unavailable": "plan"}
_TYPE = re.compile(r"^(?:task_load_error|training_error): ([A-Za-z_][\w.]*)(?::| \(no message\))")


def error_from_text(data: dict[str, Any]) -> dict[str, Any]:
    """Versions 7 to 9 -> 10 (and a record given its error as text, as keyword arguments may): the ``error``
    and ``traceback`` texts become a :class:`JobError` of the record's status, its type and phase read
    from the text where it says them; no error text, no error."""
    if "job_error" in data:
        return data
    out = dict(data)
    message, trace = str(out.pop("error", "") or ""), str(out.pop("traceback", "") or "")
    if not message and not trace:
        return {**out, "job_error": None}
    phase = next((p for prefix, p in _PHASE_OF_PREFIX.items() if message.startswith(prefix)), "")
    found = _TYPE.match(message)
    kind = found.group(1) if found else ("BudgetExhausted" if message.startswith("budget exhausted") else "")
    return {**out, "job_error": {"status": out.get("status"), "type": kind, "message": message, "traceback": trace,
                                 "phase": phase}}

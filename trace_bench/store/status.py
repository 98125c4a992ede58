"""A job's status, and the groups of statuses every reader and writer agrees on.

``Status`` is a ``str`` enum: its members compare equal to, hash like and format as their plain
value, so ``results.csv``, ``results.json`` and the event logs keep the same strings
(``"ok"``, ``"budget_exhausted"``, ...) and code may compare a status read from a CSV cell with a
member directly.  The groups below are the only definitions of "successful", "complete" and
"failed" in the package.
"""

from __future__ import annotations

from enum import Enum


class Status(str, Enum):
    """How a job ended."""

    OK = "ok"
    FAILED = "failed"
    TIMEOUT = "timeout"
    OOM = "oom"
    BUDGET_EXHAUSTED = "budget_exhausted"
    SKIPPED = "skipped"
    INFRA_ERROR = "infra_error"
    #: the task itself is broken: its guide or evaluator raised or gave a non-finite score, or it
    #: could not be built (never a score of the candidate's)
    TASK_ERROR = "task_error"
    INTERRUPTED = "interrupted"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)

    @property
    def successful(self) -> bool:
        return self in SUCCESSFUL

    @property
    def complete(self) -> bool:
        return self in COMPLETE

    @property
    def failed(self) -> bool:
        return self in FAILED


class PlanState(str, Enum):
    """States a manifest entry has before (or instead of) a job status."""

    PENDING = "pending"
    NOT_EXECUTED = "not_executed"
    VALIDATED = "validated"
    #: carried over from an earlier invocation of the run (resume): its record is the old one
    REUSED = "reused"

    def __str__(self) -> str:
        return self.value

    def __format__(self, spec: str) -> str:
        return format(self.value, spec)


#: The job ran to its end and its scores enter statistics (leaderboard, report, compare).
SUCCESSFUL: frozenset[Status] = frozenset({Status.OK, Status.BUDGET_EXHAUSTED})
#: Nothing is left to do for the job in this run: ``--resume failed`` does not re-run it and the
#: run may exit 0.  (``--resume auto`` still retries a skipped job: its task may be available now.)
COMPLETE: frozenset[Status] = SUCCESSFUL | {Status.SKIPPED}
#: The job ended abnormally on its own (not stopped by the user, not skipped).
FAILED: frozenset[Status] = frozenset({Status.FAILED, Status.TIMEOUT, Status.OOM, Status.INFRA_ERROR,
                                       Status.TASK_ERROR})
#: The job ran, however it ended (only a skipped job did not): what it spent is part of its arm's
#: cost per job, failed jobs included, since a provider bills the calls of a job that then failed.
RAN: frozenset[Status] = frozenset(Status) - {Status.SKIPPED}
#: Every status is terminal: a job with a status has ended; ``running``/``pending`` are not statuses.
TERMINAL: frozenset[Status] = frozenset(Status)

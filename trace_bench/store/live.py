"""Live state folded from the event logs: the one fold that the console, the UI and the records of
jobs that did not report all use.

A job's ``events.jsonl`` folds into a :class:`JobProgress` (its start, its latest step, its LLM
usage per phase, the sandbox denials its calls ran into, its own status once it finished); the run's ``events.jsonl`` folds into a
:class:`RunProgress` (the run's state and each job's latest state).  Both take events one at a
time (:meth:`apply`), so a reader that follows a log (``LogFollower``) keeps one and feeds it only
the lines appended since its last look.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from trace_bench.store.models import (
    Event,
    JobEnded,
    JobFinished,
    JobStarted,
    JobSubmitted,
    LLMCall,
    RoleUsage,
    RunFinished,
    RunStarted,
    SandboxDenial,
    Step,
)
from trace_bench.store.status import FAILED

if TYPE_CHECKING:
    from typing_extensions import Self

#: LLM phases: ``train`` (the trainer's calls, what a budget counts) and ``measure`` (the harness's)
PHASES = ("train", "measure")


class _Fold:
    """A state folded from events: :meth:`of` applies each event in order (``apply``)."""

    def apply(self, event: Event) -> None:
        raise NotImplementedError

    @classmethod
    def of(cls, events: Iterable[Event]) -> Self:
        progress = cls()
        for event in events:
            progress.apply(event)
        return progress


@dataclass
class JobProgress(_Fold):
    """One job as its events tell it so far."""

    started_at: str = ""
    step: Step | None = None
    status: str | None = None
    usage: dict[str, RoleUsage] = field(default_factory=lambda: {phase: RoleUsage() for phase in PHASES})
    denials: dict[str, int] = field(default_factory=dict)
    #: training-phase calls counted again by who made them (``evaluator``: the task's evaluator)
    by_caller: dict[str, RoleUsage] = field(default_factory=dict)


    @property
    def train(self) -> RoleUsage:
        """The trainer's answered calls (cache answers included): the job's spend."""
        return self.usage["train"]

    @property
    def measure(self) -> RoleUsage:
        return self.usage["measure"]

    def apply(self, event: Event) -> None:
        if isinstance(event, LLMCall):
            buckets = [self.usage[event.phase or "train"]]
            if event.caller and (event.phase or "train") == "train":
                buckets.append(self.by_caller.setdefault(event.caller, RoleUsage()))
            for bucket in buckets:
                if event.error:
                    bucket.add_error(event.retries)
                else:
                    bucket.add_call(prompt_tokens=event.prompt_tokens, completion_tokens=event.completion_tokens,
                                    total_tokens=event.total_tokens, cost_usd=event.cost_usd, cached=event.cached,
                                    retries=event.retries, estimated=event.estimated,
                                    unanswered=event.unanswered is not None)
        elif isinstance(event, Step):
            self.step = event
        elif isinstance(event, JobStarted) and not self.started_at:
            self.started_at = event.ts
        elif isinstance(event, SandboxDenial):
            self.denials[event.kind] = self.denials.get(event.kind, 0) + 1
        elif isinstance(event, JobFinished):
            self.status = str(event.status)


#: a job the driver submitted and has not recorded yet
RUNNING = "running"
#: a job that was running when its run ended (an interrupt, a killed driver's resume)
INTERRUPTED = "interrupted"


@dataclass
class RunProgress(_Fold):
    """A run as its events tell it: ``state`` (``starting`` before its first ``run_started``, then
    ``running``, then ``finished`` or ``interrupted``), its size, and each job's latest state
    (``running`` between its submission and its record, else its status)."""

    state: str = "starting"
    total: int = 0
    jobs: dict[str, str] = field(default_factory=dict)
    started_ts: str = ""
    finished_ts: str = ""  # the latest session's end ("" while it runs): elapsed time stops there
    finished_this_session: int = 0
    workers: int = 0  # the job processes at a time of the latest session (0 before it started)


    def apply(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self.state, self.total, self.started_ts, self.finished_this_session = "running", event.total_jobs, \
                event.ts, 0
            self.finished_ts = ""
            self.workers = event.max_workers
        elif isinstance(event, JobSubmitted) and event.job_id:
            self.jobs[event.job_id] = RUNNING
        elif isinstance(event, JobEnded) and event.job_id:
            self.jobs[event.job_id] = str(event.status)
            self.finished_this_session += 1
        elif isinstance(event, RunFinished):
            self.state = INTERRUPTED if event.interrupted or event.not_run else "finished"
            self.finished_ts = event.ts
            for job_id, status in self.jobs.items():
                if status == RUNNING:
                    self.jobs[job_id] = INTERRUPTED

    def counts(self) -> dict[str, int]:
        counts: dict[str, int] = {}
        for status in self.jobs.values():
            counts[status] = counts.get(status, 0) + 1
        return counts

    @property
    def running(self) -> list[str]:
        return [job_id for job_id, status in self.jobs.items() if status == RUNNING]

    @property
    def failed(self) -> int:
        return sum(1 for status in self.jobs.values() if status in FAILED)

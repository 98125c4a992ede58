"""The lines of the two event logs: a job's ``events.jsonl`` and the run's ``events.jsonl``.

Every line is ``{"ts": <UTC ISO-8601 ms>Z, "type": ..., ...}``.  Fields that identify a line
(``step``, a run log's ``job_id``, a ``job_finished`` status) are required; the others have
defaults, so a hand-edited or partly written log still reads.  Each log has its own
discriminated union (:data:`JobEvent`, :data:`RunEvent`): ``job_started`` and ``job_finished``
appear in both with different fields (the job's own view, and the driver's).  A line whose type
this version does not know (a plugin's, a newer trace-bench's) is read as :class:`OtherEvent`,
never dropped.  Version 2 adds ``schema_version`` to every line; version-1 lines have none.
"""

from __future__ import annotations

from typing import Annotated, Any, ClassVar, Literal

from pydantic import ConfigDict, Field

from trace_bench.store.models._base import StoreModel
from trace_bench.store.status import Status


class Event(StoreModel):
    SCHEMA_VERSION: ClassVar[int] = 2
    FILE: ClassVar[str] = "events.jsonl"

    ts: str = Field(default="", description="UTC ISO-8601 with milliseconds, set when the line is written")
    type: str


# --- a job's events.jsonl ---------------------------------------------------------------------

class JobStarted(Event):
    type: Literal["job_started"] = "job_started"
    job_id: str = ""
    task: str = ""
    trainer: str = ""
    seed: int | None = None
    attempt: int = 1


class LLMCall(Event):
    """One metered LLM exchange (failed ones carry ``error`` and the HTTP ``status``)."""

    type: Literal["llm_call"] = "llm_call"
    role: str = ""
    model: str = ""
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float = 0.0
    cost_known: bool | None = None
    latency_s: float | None = None
    cached: bool = False
    retries: int = 0
    estimated: bool = False
    phase: Literal["train", "measure"] | None = Field(default=None, description="null means train")
    caller: str | None = Field(default=None, description="`evaluator`: made by the task's evaluator through the "
                               "run's gateway (null: the trainer's or the harness's own call)")
    error: str | None = None
    status: int | None = Field(default=None, description="HTTP status of a failed call")
    unanswered: Literal["timed_out", "connection_lost", "unusable", "cancelled", "cut_off"] | None = Field(
        default=None, description="a request the provider received whose answer never came back usable, charged "
        "estimated (its prompt bound and a completion up to its limit): why")

    @property
    def counts_against_budget(self) -> bool:
        """A training-phase call that was answered (a cache answer is charged its recorded usage):
        what the budget and the ledger count."""
        return not self.error and self.phase != "measure"


class Step(Event):
    """One trainer step as the harness measured it (version 3 adds ``score_dict``)."""

    SCHEMA_VERSION: ClassVar[int] = 3
    type: Literal["step"] = "step"
    step: int
    score: float | None = None
    best_score: float | None = None
    score_dict: dict[str, float | None] = Field(
        default_factory=dict, description="per-objective means of the step's state on the selection split "
        "(``{\"score\": s}`` on a single-objective task)")
    n_evals: int = 0
    llm_calls: int = 0
    tokens: int = 0
    usd: float = 0.0
    wall_s: float = 0.0
    info: dict[str, Any] | None = None


class BudgetExhausted(Event):
    type: Literal["budget_exhausted"] = "budget_exhausted"
    resource: str = ""
    limit: float | None = None
    spent: float | None = None
    needed: float = Field(default=0.0, description="the refused call's worst case in the resource (its prompt "
                          "bound and completion limit, or their USD): ``spent + needed > limit``; 0 when the limit "
                          "was reached (``spent >= limit``)")


class SandboxDenial(Event):
    """A sandboxed call of the job ran into a boundary (a reward-hacking signal, see docs/analysis.md#integrity)."""

    type: Literal["sandbox_denial"] = "sandbox_denial"
    kind: str = Field(default="", description="timeout, memory, result_too_large, forged_result, file, network, "
                      "process or syscall")
    target: str = Field(default="", description="the sandbox target that ran the candidate")
    status: str = Field(default="", description="the call's status (ok when the code caught the refusal)")
    caught: bool = Field(default=False, description="the code caught the refusal itself (the sandbox's "
                         "record of refused system calls, or the weak mode's audit hook, saw it)")
    detail: str = ""
    count: int = Field(default=1, description="how many refusals of this kind the event stands for (the "
                       "sandbox's record counts refused system calls per call)")


class JobFinished(Event):
    type: Literal["job_finished"] = "job_finished"
    status: Status
    score_best: float | None = None
    error: str = ""
    time_seconds: float = 0.0
    wall_started: float | None = Field(default=None, description="Unix time the job body started")


# --- the run's events.jsonl ---------------------------------------------------------------------

class RunStarted(Event):
    model_config = ConfigDict(defer_build=True)

    type: Literal["run_started"] = "run_started"
    run_id: str = ""
    config_hash: str = ""
    total_jobs: int = 0
    to_run: int = 0
    resume: str = "auto"
    max_workers: int = 1


class JobSubmitted(Event):
    """The driver started a job process (the run log's ``job_started``)."""

    model_config = ConfigDict(defer_build=True)

    type: Literal["job_started"] = "job_started"
    job_id: str
    task: str = ""
    trainer: str = ""
    seed: int | None = None


class JobRetry(Event):
    model_config = ConfigDict(defer_build=True)

    type: Literal["job_retry"] = "job_retry"
    job_id: str
    reason: str = ""


class JobEnded(Event):
    """The driver recorded a job's result (the run log's ``job_finished``)."""

    model_config = ConfigDict(defer_build=True)

    type: Literal["job_finished"] = "job_finished"
    job_id: str
    status: Status
    score_best: float | None = None
    time_seconds: float = 0.0
    done: int | None = None
    total: int | None = None


class RunFinished(Event):
    model_config = ConfigDict(defer_build=True)

    type: Literal["run_finished"] = "run_finished"
    run_id: str = ""
    counts: dict[str, int] = Field(default_factory=dict)
    not_run: int = 0
    interrupted: bool = False
    key_refused: str = Field(default="", description="the key variable whose key the provider refused (or "
                             "whose quota it reported spent) in a job: the run stopped scheduling jobs")


class TrackerWarning(Event):
    model_config = ConfigDict(defer_build=True)

    type: Literal["tracker_warning"] = "tracker_warning"
    tracker: str = ""
    error: str = ""
    traceback: str = ""


class Preflight(Event):
    """A real run's check of one (endpoint, model, key variable) before its first job: what it
    found and spent, apart from every job's spend (the key itself is never written)."""

    model_config = ConfigDict(defer_build=True)

    type: Literal["preflight"] = "preflight"
    endpoint: str = ""
    model: str = ""
    key_variable: str = ""
    method: str = Field(default="models", description="models (the endpoint's model list) or completion "
                        "(a one-token chat completion)")
    status: int | None = None
    ok: bool = True
    latency_s: float = 0.0
    requests: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    cost_known: bool = Field(default=True, description="false when a check's tokens have no price in "
                             "llm.prices (the preflight never loads LiteLLM's price map)")
    note: str = ""
    warning: str = Field(default="", description="what the check accepted that a user should know "
                         "(a model the endpoint does not list, under llm.any_model)")


class OtherEvent(Event):
    """A line of a type this version does not model; its fields are kept as they are."""

    model_config = ConfigDict(extra="allow")


JobEvent = Annotated[JobStarted | LLMCall | Step | BudgetExhausted | SandboxDenial | JobFinished,
                     Field(discriminator="type")]
RunEvent = Annotated[RunStarted | JobSubmitted | JobRetry | JobEnded | RunFinished | TrackerWarning | Preflight,
                     Field(discriminator="type")]

JOB_EVENTS: dict[str, type[Event]] = {cls.model_fields["type"].default: cls
                                      for cls in (JobStarted, LLMCall, Step, BudgetExhausted, SandboxDenial,
                                                  JobFinished)}
RUN_EVENTS: dict[str, type[Event]] = {cls.model_fields["type"].default: cls
                                      for cls in (RunStarted, JobSubmitted, JobRetry, JobEnded, RunFinished,
                                                  TrackerWarning, Preflight)}

"""A job's live record: filled while the job runs, frozen once into its :class:`JobResult`.

optuna keeps a live ``Trial`` in the worker and an immutable ``FrozenTrial`` in storage; so do we.
The job body (``trace_bench.runner.job``) fills a :class:`LiveResult` as the job goes (when it
started, what it resolved, its scores, its spend, its audit, its error) and builds the record once,
at its end, with :meth:`LiveResult.freeze`; the driver does the same for a job that never reported
(``trace_bench.runner.salvage``).  The record itself is never changed after that.

The job's status is derived here, in one place, from its error (:class:`JobError`): none is ``ok``.
Every value is validated as it is given (a wrong type is an error where it was set, as assigning to
the record was), so freezing cannot fail on a value.
"""

from __future__ import annotations

import functools
from typing import Any

from pydantic import TypeAdapter

from trace_bench.store.models import JobError, JobResult, JobSpec, Resolution, RoleUsage, Spend
from trace_bench.store.models.error import Phase
from trace_bench.store.models.job import SCORE_FIELDS
from trace_bench.store.models.spend import CARRIED_COLUMNS, SPEND_COLUMNS
from trace_bench.store.status import Status

#: the record's fields the live handle sets itself (through its own attributes and methods)
_OWN = frozenset({"schema_version", "run_id", "spec", "attempt", "status", "job_error", "resolved"})


@functools.cache
def _adapter(name: str) -> TypeAdapter[Any]:
    annotation: Any = JobResult.model_fields[name].annotation
    return TypeAdapter(annotation)


def warm_adapters() -> None:
    """Build the validator of every field :meth:`LiveResult.set` takes, once, in the job template
    (each forked job built ~40 of them itself: ~4 ms of every job)."""
    for name in JobResult.model_fields:
        if name not in _OWN:
            _adapter(name)


class LiveResult:
    """The live handle of one job attempt's record (see the module docstring)."""

    def __init__(self, spec: JobSpec, run_id: str, attempt: int = 1, *, carried_measure: Spend | None = None) -> None:
        self.spec = spec
        self.run_id = run_id
        self.attempt = attempt
        #: the harness's measurement calls of earlier attempts: part of the ``measure_*`` columns
        self.carried_measure = carried_measure or Spend()
        #: what the job really used: what the specification says until the job resolved it
        self.resolved = Resolution.planned(spec)
        #: where the job is now: the phase an error raised now is recorded in
        self.phase: Phase = "setup"
        self.error: JobError | None = None
        self._fields: dict[str, Any] = {}

    @property
    def status(self) -> Status:
        """The job's status: its error's, ``ok`` without one (the one place it is derived)."""
        return Status.OK if self.error is None else self.error.status

    def set(self, **fields: Any) -> None:
        """Set fields of the record (scores, counts, times, audit, ...), each validated now."""
        for name, value in fields.items():
            if name in _OWN or name not in JobResult.model_fields:
                raise AttributeError(f"LiveResult.set: {name!r} is not a field it sets (see {type(self).__name__})")
            self._fields[name] = _adapter(name).validate_python(value)

    def get(self, name: str) -> Any:
        """A field of the record as it stands: the value set so far, else the field's default."""
        if name in self._fields:
            return self._fields[name]
        return JobResult.model_fields[name].get_default(call_default_factory=True)

    def __getattr__(self, name: str) -> Any:
        """The record's fields read as attributes, as the record would show them now (what reads a
        record, such as the audit's score flags, reads the live one alike)."""
        if name.startswith("_") or name not in JobResult.model_fields:
            raise AttributeError(name)
        return self.get(name)

    def fail(self, error: JobError) -> None:
        """The job's error; a later one replaces it (the last failure is the one that ended the job)."""
        self.error = error

    def clear_scores(self) -> None:
        """No score of any kind: the job's task failed (its curve keeps what happened before)."""
        for name in SCORE_FIELDS:
            self._fields.pop(name, None)
        self._fields.pop("score_dict_best", None)

    def charge(self, train: RoleUsage, measure: RoleUsage, carried: Spend, budget_spent: Spend, *,
               estimated: bool, evaluator: RoleUsage | None = None, by_role: dict[str, RoleUsage] | None = None,
               errors: int = 0, retries: int = 0) -> None:
        """The job's LLM usage: the trainer's calls (``train``, what the budget counts) as its cost
        columns, what earlier attempts spent (``carried``) included and named apart (``carried_*``),
        the requests of them the provider never answered usably, the harness's measurement calls
        (``measure``, and those of earlier attempts: ``carried_measure``) apart, an LLM-calling
        evaluator's share (``evaluator``: ``eval_*``), and what its budget counted."""
        own, columns, measured = train.spend(), {}, measure.spend().plus(self.carried_measure).rounded()
        for figure, column in SPEND_COLUMNS.items():
            part, total = getattr(carried, figure), getattr(own, figure) + getattr(carried, figure)
            columns[CARRIED_COLUMNS[figure]] = round(part, 10) if figure == Spend.COST else part
            columns[column] = round(total, 10) if figure == Spend.COST else total
        self.set(**columns, cache_hits=train.cache_hits, prompt_tokens=train.prompt_tokens,
                 completion_tokens=train.completion_tokens, tokens_estimated=estimated,
                 measure_llm_calls=measured.llm_calls, measure_tokens=measured.tokens,
                 measure_cost_usd=measured.usd, llm_errors=errors, llm_retries=retries,
                 llm_unanswered=train.unanswered, budget_spent=budget_spent)
        if evaluator is not None:
            self.set(eval_llm_calls=evaluator.llm_calls, eval_tokens=evaluator.total_tokens,
                     eval_cost_usd=round(evaluator.cost_usd, 10))
        if by_role is not None:
            self.set(usage_by_role={role: usage.model_copy() for role, usage in by_role.items()})

    def freeze(self) -> JobResult:
        """The job's record, built once from what was set (its status from its error)."""
        return JobResult.model_validate({
            "run_id": self.run_id, "spec": self.spec, "attempt": self.attempt, "status": self.status,
            "job_error": self.error, "resolved": self.resolved, **self._fields})

"""What a job spends: the one :class:`Spend` record (in the units a budget limits), the LLM usage
of a role or phase (:class:`RoleUsage`), the budget ledger that survives a re-run
(``attempts.json``, :class:`Attempts`) and the lines of the spend journal (``llm_spend.jsonl``,
:class:`SpendEntry`)."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, SerializerFunctionWrapHandler, model_serializer

from trace_bench._util.keyed import KeyedModel
from trace_bench.store.models._base import StoreModel, Upgrade


def _columns(column: str, carried: str) -> dict[str, Any]:
    return {"column": column, "carried": carried}


class Spend(KeyedModel):
    """What a job spent, in the units its budget limits (the config's ``budget`` keys), declared
    here once: the budget's own figures (spent, carried from earlier attempts, reserved by calls in
    flight), a spend journal's total, ``attempts.json``'s ``carried``, a record's ``budget_spent``,
    and the cost columns of results.csv and curve.csv (a field's ``column``: the results.csv column
    of a job's total; ``carried``: the column of the part earlier attempts spent).  ``wall_s`` is
    null where the wall clock is no part of it (what earlier attempts carried, a journal's total):
    such a spend is written without it, and so is ``evaluations`` where the budget does not count them.
    It reads by key like the mapping it was written as."""

    model_config = ConfigDict(extra="ignore")

    llm_calls: int = Field(default=0, title="LLM calls", json_schema_extra=_columns("llm_calls", "carried_llm_calls"))
    tokens: int = Field(default=0, title="tokens", json_schema_extra=_columns("total_tokens", "carried_tokens"))
    usd: float = Field(default=0.0, title="USD", json_schema_extra=_columns("cost_usd", "carried_cost_usd"))
    wall_s: float | None = Field(default=None, title="wall time (s)", description="null: not part of this spend")
    evaluations: int | None = Field(default=None, description="the trainer's task evaluations, where the budget "
                                    "limits them (null: not counted; curve.csv and results.csv count every job's "
                                    "in n_evals)")

    #: the figure in money (a USD axis is empty when every job cost nothing or had no price)
    COST: ClassVar[str] = "usd"

    @model_serializer(mode="wrap")
    def _without_an_unmeasured_wall_clock(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        for name in ("wall_s", "evaluations"):
            if getattr(self, name) is None:
                data.pop(name, None)
        return data

    def rounded(self) -> Spend:
        """This spend with its USD rounded as a record's cost columns are (10 digits: a sum of many
        small float costs differs in the 17th, and two sums of the same calls must read alike)."""
        return self.model_copy(update={Spend.COST: round(self.usd, 10)})

    def plus(self, other: Spend) -> Spend:
        """The two spends together (the wall clock and the evaluations only where either counted them)."""
        wall = None if self.wall_s is None and other.wall_s is None else (self.wall_s or 0.0) + (other.wall_s or 0.0)
        evals = (None if self.evaluations is None and other.evaluations is None
                 else (self.evaluations or 0) + (other.evaluations or 0))
        return Spend(llm_calls=self.llm_calls + other.llm_calls, tokens=self.tokens + other.tokens,
                     usd=self.usd + other.usd, wall_s=wall, evaluations=evals)


def _extra(name: str, key: str) -> str:
    extra = Spend.model_fields[name].json_schema_extra
    return str(extra[key]) if isinstance(extra, dict) else ""


#: the figures a budget counts call by call, in order (the wall clock is checked apart)
COUNTED: tuple[str, ...] = tuple(name for name in Spend.model_fields if _extra(name, "column"))
#: each figure's name for a reader (a curve's axis), in order; ``evaluations`` has none (curves count
#: them in ``n_evals``)
SPEND_AXES: dict[str, str] = {name: info.title for name, info in Spend.model_fields.items() if info.title}
#: results.csv's column of a job's total of each counted figure
SPEND_COLUMNS: dict[str, str] = {name: _extra(name, "column") for name in COUNTED}
#: results.csv's column of the part of each counted figure that earlier attempts spent
CARRIED_COLUMNS: dict[str, str] = {name: _extra(name, "carried") for name in COUNTED}


class RoleUsage(BaseModel):
    """LLM usage of one role or phase (optimizer, agent, judge; train, measure) in one job: what the
    live session counts and what a fold of the job's ``llm_call`` events gives back.  ``llm_calls``,
    tokens and cost include answers served from the cache (charged with their recorded usage);
    ``cache_hits`` says how many of the calls those were."""

    model_config = ConfigDict(extra="allow")

    llm_calls: int = 0
    cache_hits: int = 0
    errors: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float = 0.0
    estimated: bool = False
    unanswered: int = Field(default=0, description="of ``llm_calls``, the requests the provider received "
                            "whose answer never came back usable (timed out, connection lost, unusable, cancelled, "
                            "cut off by the job's end): each charged as an estimated call, or the usage its unusable answer reported")

    def add_call(self, *, prompt_tokens: int, completion_tokens: int, total_tokens: int, cost_usd: float,
                 cached: bool = False, retries: int = 0, estimated: bool = False, unanswered: bool = False) -> None:
        """One call that came back (from the provider or the cache), or one the provider received
        and never answered usably (``unanswered``), charged estimated."""
        self.llm_calls += 1
        self.unanswered += int(unanswered)
        self.cache_hits += int(cached)
        self.prompt_tokens += prompt_tokens
        self.completion_tokens += completion_tokens
        self.total_tokens += total_tokens
        self.cost_usd += cost_usd
        self.retries += retries
        self.estimated = self.estimated or estimated

    def add_error(self, retries: int = 0) -> None:
        """One call that failed (it counts no tokens and no cost; the retries it made count)."""
        self.errors += 1
        self.retries += retries

    def spend(self) -> Spend:
        """The calls, tokens and cost as a :class:`Spend` (no wall clock)."""
        return Spend(llm_calls=self.llm_calls, tokens=self.total_tokens, usd=self.cost_usd)


def _attempts_v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    """A version-2 ledger carried no measurement calls (they were lost on a resume): none."""
    return {**data, "carried_measure": data.get("carried_measure") or {}}


class Attempts(StoreModel):
    """``attempts.json``: the budget ledger that survives a re-run of the job (version 2 adds
    ``schema_version``; version 1 had none; version 3 adds ``carried_measure``: an older file carried
    none, so reads as none)."""

    model_config = ConfigDict(defer_build=True)

    SCHEMA_VERSION: ClassVar[int] = 3
    UPGRADES: ClassVar[dict[int, Upgrade]] = {2: _attempts_v2_to_v3}
    FILE: ClassVar[str] = "attempts.json"

    attempts: int = 0
    carried: Spend = Field(default_factory=Spend, description="training-phase spend of the earlier attempts")
    carried_measure: Spend = Field(default_factory=Spend, description="the harness's measurement calls of the "
                                   "earlier attempts (billed by the provider, counted by no budget)")


class SpendEntry(StoreModel):
    """A line of ``llm_spend.jsonl``, the job's spend journal: one ``sent`` line before each LLM
    call goes out, one ``settled`` line when it came back (``llm_calls`` 0 for a call that failed:
    failed calls are not charged).  A ``sent`` line without its ``settled`` one is a call cut off
    in flight (a kill, a timeout, a job that ended while it ran): the provider received it and
    bills it, so it is charged as one call, its prompt's estimated tokens plus a completion of
    ``completion_cap`` tokens (the request's limit; 0 without one) and ``usd_if_cut``, all flagged
    estimated.  Only ``train`` lines count against the budget.  Version 2 adds ``phase``,
    ``completion_cap`` and ``usd_if_cut`` (version-1 files journaled training calls only)."""

    model_config = ConfigDict(defer_build=True)

    SCHEMA_VERSION: ClassVar[int] = 2
    FILE: ClassVar[str] = "llm_spend.jsonl"

    call: int = Field(description="number of the call within the job's attempt, from 1")
    event: Literal["sent", "settled"]
    phase: Literal["train", "measure"] = Field(default="train", description="whose call: the trainer's "
                                               "(what a budget counts) or the harness measuring a state")
    prompt_tokens: int = Field(default=0, description="sent: the prompt's estimated token count")
    completion_cap: int | None = Field(default=None, description="sent: the completion limit the request carried")
    usd_if_cut: float = Field(default=0.0, description="sent: the estimated cost of the prompt and a completion "
                              "of completion_cap tokens (0 when the model's price is unknown)")
    llm_calls: int = Field(default=0, description="settled: 1, or 0 for a call that failed")
    tokens: int = Field(default=0, description="settled: total tokens the provider reported (or the cache replayed)")
    usd: float = Field(default=0.0, description="settled: the call's cost")

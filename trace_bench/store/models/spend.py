"""What a job spends: the LLM usage of a role or phase (:class:`RoleUsage`), the budget ledger that
survives a re-run (``attempts.json``, :class:`Attempts`) and the lines of the spend journal
(``llm_spend.jsonl``, :class:`SpendEntry`)."""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from trace_bench.store.models._base import StoreModel


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
                            "cut off by the job's end): each charged as an estimated call")

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


class Attempts(StoreModel):
    """``attempts.json``: the budget ledger that survives a re-run of the job (version 2 adds
    ``schema_version``; version 1 had none)."""

    SCHEMA_VERSION: ClassVar[int] = 2
    FILE: ClassVar[str] = "attempts.json"

    attempts: int = 0
    carried: dict[str, float] = Field(default_factory=lambda: {"llm_calls": 0, "tokens": 0, "usd": 0.0},
                                      description="training-phase spend of the earlier attempts")


class SpendEntry(StoreModel):
    """A line of ``llm_spend.jsonl``, the job's spend journal: one ``sent`` line before each LLM
    call goes out, one ``settled`` line when it came back (``llm_calls`` 0 for a call that failed:
    failed calls are not charged).  A ``sent`` line without its ``settled`` one is a call cut off
    in flight (a kill, a timeout, a job that ended while it ran): the provider received it and
    bills it, so it is charged as one call, its prompt's estimated tokens plus a completion of
    ``completion_cap`` tokens (the request's limit; 0 without one) and ``usd_if_cut``, all flagged
    estimated.  Only ``train`` lines count against the budget.  Version 2 adds ``phase``,
    ``completion_cap`` and ``usd_if_cut`` (version-1 files journaled training calls only)."""

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

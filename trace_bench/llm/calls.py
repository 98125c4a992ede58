"""What the session knows about one call while it is in flight, and how it sizes a call.

A call's worst case (what it reserves against the budget, and what it is charged if the provider
never answers it usably) is its prompt bound (:mod:`trace_bench.llm.tokens`: never below the
provider's count) plus its completion limit, and what those cost at the model's price.  The cache
key of a request (:func:`request_key`) is its content only: model, canonical messages and sampling
parameters, never secrets, URLs or a limit the budget added.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from pydantic import Field

from trace_bench.llm.backend import Backend
from trace_bench.llm.budget import Budget, Spent
from trace_bench.llm.tokens import prompt_token_bound
from trace_bench.llm.types import Completion
from trace_bench.store.live import PHASES
from trace_bench.store.models import RoleUsage


class UsageTotals(RoleUsage):
    """The session's usage: all calls, and the same split by role and by phase (the store's
    :class:`RoleUsage`, which a job's record and a fold of its events use too)."""

    by_role: dict[str, RoleUsage] = Field(default_factory=dict)
    by_phase: dict[str, RoleUsage] = Field(default_factory=lambda: {phase: RoleUsage() for phase in PHASES})
    by_caller: dict[str, RoleUsage] = Field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()


@dataclass
class InFlight:
    """A call of the session: what each of its requests to the provider reserves (``need``) and is
    charged if it is cut off; ``ticket`` and ``reservation`` belong to the request in flight (None
    between a charged attempt and its retry).  ``cut``: charged as cut off by the job's end, after
    which nothing more is counted for it."""

    role: str
    model: str
    phase: str
    prompt_tokens: int
    completion_cap: int | None
    usd_if_cut: float | None
    need: Spent
    reservation: Spent | None
    ticket: int | None
    started: float
    key_variable: str = ""
    cut: bool = False
    caller: str | None = None


def charged(completion: Completion) -> tuple[int, int, float]:
    """``(calls, tokens, usd)`` the journal settles a request with."""
    return 1, completion.usage.total_tokens, completion.cost_usd or 0.0


_SAMPLING_KEYS = ("temperature", "top_p", "max_tokens", "max_completion_tokens", "response_format", "n", "stop", "seed")


def request_key(model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """Content key of a request: model, messages and sampling parameters; never secrets or URLs."""
    from trace_bench.llm.stub import canonical_prompt

    sampling = {k: params[k] for k in _SAMPLING_KEYS if k in params}
    # Canonical content: opto prompts carry object addresses, process-global node numbers and
    # address-dependent line order, which would make every replay of a real run miss the cache.
    canonical = [{"role": m.get("role"), "content": canonical_prompt(str(m.get("content", "")))} for m in messages]
    blob = json.dumps({"model": model, "messages": canonical, "sampling": sampling}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


def prompt_bound(backend: Backend, messages: list[dict[str, Any]]) -> int:
    """The backend's bound of the prompt (its provider's tokenizer, or the stub's own count), else
    the byte bound."""
    bound = getattr(backend, "prompt_bound", None)
    return int(bound(messages)) if callable(bound) else prompt_token_bound(messages)


def unit_costs(estimate_cost: Any, prompt: int) -> tuple[float, float] | None:
    """``(cost of the prompt, cost per completion token)`` from a backend's ``estimate_cost``
    (looked up outside the session's lock: a price map may load on first use); None: unknown."""
    if not callable(estimate_cost):
        return None
    prompt_cost, per_token = estimate_cost(prompt, 0), estimate_cost(0, 1)
    if prompt_cost is None or per_token is None:
        return None
    return float(prompt_cost), float(per_token)


def completion_allowance(budget: Budget, spent: Spent, prompt: int, n: int, price: tuple[float, float] | None) -> int:
    """Completion tokens per choice that the tokens and USD limits leave after a prompt of
    ``prompt`` tokens, for a call that set no limit of its own (at least 1: a call that does not
    fit is then refused by the reservation)."""
    room = budget.headroom(spent)
    limits = []
    if budget.tokens is not None:
        limits.append((room.tokens - prompt) // n)
    if budget.usd is not None and price is not None and price[1] > 0:
        limits.append(int((room.usd - price[0]) / price[1]) // n)
    return max(1, min(limits)) if limits else 1

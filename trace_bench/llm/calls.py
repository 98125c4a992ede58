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
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from trace_bench.llm.backend import Backend
from trace_bench.llm.budget import Budget
from trace_bench.llm.tokens import prompt_token_bound
from trace_bench.llm.types import Completion
from trace_bench.store.live import PHASES
from trace_bench.store.models import RoleUsage, Spend


class UsageTotals(RoleUsage):
    """The session's usage: all calls, and the same split by role and by phase (the store's
    :class:`RoleUsage`, which a job's record and a fold of its events use too)."""

    by_role: dict[str, RoleUsage] = Field(default_factory=dict)
    by_phase: dict[str, RoleUsage] = Field(default_factory=lambda: {phase: RoleUsage() for phase in PHASES})
    by_caller: dict[str, RoleUsage] = Field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()

    def _buckets(self, role: str, phase: str, caller: str | None) -> list[RoleUsage]:
        buckets = [self, self.by_role.setdefault(role, RoleUsage()), self.by_phase.setdefault(phase, RoleUsage())]
        if caller and phase == "train":
            buckets.append(self.by_caller.setdefault(caller, RoleUsage()))
        return buckets

    def count_call(self, role: str, phase: str, caller: str | None, completion: Completion) -> None:
        """Count a charged call (answered, or charged unanswered) in the totals and in its role's,
        phase's and (training-phase) caller's buckets."""
        usage = completion.usage
        for bucket in self._buckets(role, phase, caller):
            bucket.add_call(prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                            total_tokens=usage.total_tokens, cost_usd=completion.cost_usd or 0.0,
                            cached=completion.cached, retries=completion.retries, estimated=completion.estimated,
                            unanswered=completion.unanswered is not None)

    def count_error(self, role: str, phase: str, caller: str | None, retries: int) -> None:
        """Count a call that failed (no tokens, no cost; the retries it made count)."""
        for bucket in self._buckets(role, phase, caller):
            bucket.add_error(retries)


#: the request parameters that are part of its content (its cache key, its transcript)
SAMPLING_KEYS = ("temperature", "top_p", "max_tokens", "max_completion_tokens", "response_format", "n", "stop", "seed")


@dataclass
class Request:
    """What a job's transcript keeps of a call as it was sent (``number`` from 1, in the order
    the session sent its calls; ``step``: the trainer step in progress; ``params``: the dict sent)."""

    number: int
    step: int
    messages: list[Any]
    params: dict[str, Any] = field(default_factory=dict)
    key: str = ""
    n: int = 1

    def sampling(self) -> dict[str, Any]:
        """The sampling parameters sent (``params`` is the dict the session sent, a limit it added included)."""
        sampling = {k: self.params[k] for k in SAMPLING_KEYS if k in self.params}
        if self.n > 1:
            sampling["n"] = self.n
        return sampling


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
    need: Spend
    reservation: Spend | None
    ticket: int | None
    started: float
    key_variable: str = ""
    cut: bool = False
    caller: str | None = None
    request: Request | None = None


def charged(completion: Completion) -> tuple[int, int, float]:
    """``(calls, tokens, usd)`` the journal settles a request with."""
    return 1, completion.usage.total_tokens, completion.cost_usd or 0.0


def request_key(model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """Content key of a request: model, messages and sampling parameters; never secrets or URLs."""
    from trace_bench.llm.stub import canonical_prompt

    sampling = {k: params[k] for k in SAMPLING_KEYS if k in params}
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


def completion_allowance(budget: Budget, spent: Spend, prompt: int, n: int, price: tuple[float, float] | None) -> int:
    """Completion tokens per choice that the tokens and USD limits leave after a prompt of
    ``prompt`` tokens, for a call that set no limit of its own (at least 1: a call that does not
    fit is then refused by the reservation)."""
    room = budget.headroom(spent)
    limits = []
    if budget.limits.tokens is not None:
        limits.append((room.tokens - prompt) // n)
    if budget.limits.usd is not None and price is not None and price[1] > 0:
        limits.append(int((room.usd - price[0]) / price[1]) // n)
    return max(1, min(limits)) if limits else 1


def call_event(role: str, completion: Completion, latency: float, phase: str, caller: str | None) -> dict[str, Any]:
    """The ``llm_call`` event of a charged call (answered, or charged unanswered)."""
    usage = completion.usage
    reason = completion.unanswered
    return {
        "type": "llm_call", "role": role, "model": completion.model,
        "prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.total_tokens, "cost_usd": completion.cost_usd or 0.0,
        "cost_known": completion.cost_usd is not None, "latency_s": round(latency, 6),
        "cached": completion.cached, "retries": completion.retries, "estimated": completion.estimated,
        "phase": phase, **({"unanswered": reason, reason: True} if reason else {}),
        **({"caller": caller} if caller else {}),
    }


def error_event(role: str, model: str, exc: Exception, latency: float, phase: str, caller: str | None) -> dict[str, Any]:
    """The ``llm_call`` event of a call that failed (no tokens, no cost; its retries count)."""
    return {
        "type": "llm_call", "role": role, "model": model, "error": f"{type(exc).__name__}: {exc}",
        "status": getattr(exc, "status", None), "latency_s": round(latency, 6), "prompt_tokens": 0,
        "completion_tokens": 0, "total_tokens": 0, "cost_usd": 0.0, "cached": False,
        "retries": getattr(exc, "retries", 0), "phase": phase, **({"caller": caller} if caller else {}),
    }

"""One job's LLM session: accounting, budget and per-role clients in one place.

Every call of every role of a job goes through :meth:`LLMSession.chat`, so the job's results
carry exact call, token and cost figures by role and by *phase*, and the budget is enforced
before each call is sent (:mod:`trace_bench.llm.budget`).

Phases: ``train`` is every call the trainer causes (its optimizer, the agent in its rollouts,
external libraries through the gateway); ``measure`` is the harness scoring states on the
selection and test splits (:meth:`LLMSession.measuring`).  The phase follows the calling thread
(a context variable, carried into rollout threads), so a trainer thread calling while another
thread measures is still counted as ``train``.  Budgets count only ``train``.

A call may carry a *caller*: ``evaluator`` for the calls a task's evaluator makes through its
gateway.  It changes nothing of the phase or the budget; the totals count such calls again under
:attr:`UsageTotals.by_caller` (training-phase ones only), which the job's record shows as ``eval_*``.

A call answered from the record/replay cache is charged like the call it replays (its recorded
tokens and cost), so a replay stops where its recording stopped and draws the same curve;
``cache_hits`` counts such answers separately.

Each call is also written to the session's :class:`SpendSink` (the job's spend journal) before
it is sent and after it settled, so that what a killed attempt spent, calls in flight included,
is carried into the next one and shown in its record.  A call still in flight when the job ends
is charged as cut off (:meth:`LLMSession.charge_cut_off`): its prompt, a completion up to its
``max_tokens`` limit, flagged estimated.
"""

from __future__ import annotations

import contextvars
import hashlib
import itertools
import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Protocol

from pydantic import Field

from trace_bench.llm.backend import Backend
from trace_bench.llm.budget import Budget, Spent
from trace_bench.llm.caps import capped, completion_limit
from trace_bench.llm.client import MeteredLLM
from trace_bench.llm.errors import LLMError
from trace_bench.llm.tokens import estimate_prompt_tokens
from trace_bench.llm.types import ChatResponse, Completion, Usage
from trace_bench.store.live import PHASES
from trace_bench.store.models import RoleUsage

EventSink = Callable[[dict[str, Any]], None]


class SpendSink(Protocol):
    """Where the spend of each call is journaled (``store.spend.SpendJournal``)."""

    def sent(self, prompt_tokens: int, *, phase: str = "train", completion_cap: int | None = None,
             usd_if_cut: float = 0.0) -> int: ...

    def settled(self, call: int, *, llm_calls: int, tokens: int, usd: float) -> None: ...


@dataclass
class _Call:
    """A call in flight: what it is charged if it is cut off."""

    role: str
    model: str
    phase: str
    prompt_tokens: int
    completion_cap: int | None
    usd_if_cut: float | None
    reservation: Spent | None
    ticket: int | None
    started: float
    caller: str | None = None


def _charged(completions: list[Completion]) -> tuple[int, int, float]:
    """``(calls, tokens, usd)`` the journal settles a call with: each completion is a call."""
    return (len(completions), sum(c.usage.total_tokens for c in completions),
            sum(c.cost_usd or 0.0 for c in completions))


_PHASE: contextvars.ContextVar[str | None] = contextvars.ContextVar("trace_bench_llm_phase", default=None)

_SAMPLING_KEYS = ("temperature", "top_p", "max_tokens", "max_completion_tokens", "response_format", "n", "stop", "seed")


class UsageTotals(RoleUsage):
    """The session's usage: all calls, and the same split by role and by phase (the store's
    :class:`RoleUsage`, which a job's record and a fold of its events use too)."""

    by_role: dict[str, RoleUsage] = Field(default_factory=dict)
    by_phase: dict[str, RoleUsage] = Field(default_factory=lambda: {phase: RoleUsage() for phase in PHASES})
    by_caller: dict[str, RoleUsage] = Field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump()


def request_key(model: str, messages: list[dict[str, Any]], params: dict[str, Any]) -> str:
    """Content key of a request: model, messages and sampling parameters; never secrets or URLs."""
    from trace_bench.llm.stub import canonical_prompt

    sampling = {k: params[k] for k in _SAMPLING_KEYS if k in params}
    # Canonical content: opto prompts carry object addresses, process-global node numbers and
    # address-dependent line order, which would make every replay of a real run miss the cache.
    canonical = [{"role": m.get("role"), "content": canonical_prompt(str(m.get("content", "")))} for m in messages]
    blob = json.dumps({"model": model, "messages": canonical, "sampling": sampling}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


class LLMSession:
    """Routes calls to per-role backends and meters them; thread-safe."""

    def __init__(
        self,
        backends: dict[str, Backend],
        *,
        budget: Budget | None = None,
        events: EventSink | None = None,
        default_role: str = "optimizer",
        call_wrapper: Callable[..., Completion] | None = None,
        key_salt: str = "",
    ) -> None:
        if default_role not in backends:
            raise ValueError(f"no backend for default role {default_role!r}")
        self.backends = backends
        self.budget = budget or Budget()
        self.events = events
        self.default_role = default_role
        self.call_wrapper = call_wrapper
        self.key_salt = key_salt
        self.journal: SpendSink | None = None
        self._in_flight: dict[int, _Call] = {}
        self._call_ids = itertools.count()
        self.totals = UsageTotals()
        self._samples: dict[str, int] = {}
        self._lock = threading.Lock()
        self._clients: dict[str, MeteredLLM] = {}
        self._measuring = 0
        # the last failed call: OptoPrimeMulti swallows LLM errors and fails later with an unrelated
        # one (IndexError), so the job can report this as the cause instead
        self.last_error: LLMError | None = None

    @contextmanager
    def measuring(self) -> Iterator[None]:
        """Calls made inside (in this thread, and in rollout threads it starts) are the harness
        measuring a state: metered under the ``measure`` phase, never counted by the budget."""
        token = _PHASE.set("measure")
        with self._lock:
            self._measuring += 1
        try:
            yield
        finally:
            _PHASE.reset(token)
            with self._lock:
                self._measuring -= 1

    def ambient_phase(self) -> str:
        """The phase for a call that arrives without one from another thread (a task's own
        gateway serving a subprocess): ``measure`` while any measurement runs, else ``train``."""
        with self._lock:
            return "measure" if self._measuring else "train"

    @property
    def measure_totals(self) -> RoleUsage:
        return self.totals.by_phase["measure"]

    def backend_for(self, role: str) -> Backend:
        return self.backends.get(role) or self.backends[self.default_role]

    def client(self, role: str = "optimizer") -> MeteredLLM:
        with self._lock:
            if role not in self._clients:
                self._clients[role] = MeteredLLM(self, role, self.backend_for(role).model)
            return self._clients[role]

    def spent(self) -> Spent:
        """What counts against the budget: the ``train`` phase (cache answers included)."""
        train = self.totals.by_phase["train"]
        return Spent(llm_calls=train.llm_calls, tokens=train.total_tokens, usd=train.cost_usd)

    def budget_spent(self) -> dict[str, float]:
        """Train-phase spend plus what earlier attempts spent, and wall time: the figures the
        limits apply to (``budget_spent`` of a job and ``spent`` of its ``budget_exhausted`` event)."""
        with self._lock:
            total = self.budget.total(self.spent())
        return {"llm_calls": total.llm_calls, "tokens": total.tokens, "usd": total.usd, "wall_s": total.wall_s}

    def _next_sample_index(self, key: str, n: int) -> int:
        with self._lock:
            index = self._samples.get(key, 0)
            self._samples[key] = index + n
            return index

    def chat(self, role: str, messages: list[dict[str, Any]], *, phase: str | None = None,
             caller: str | None = None, **params: Any) -> ChatResponse:
        """One metered call.  ``phase`` overrides the calling thread's phase (a gateway knows
        whose calls it serves); a ``train`` call reserves its budget share first."""
        phase = phase or _PHASE.get() or "train"
        backend = self.backend_for(role)
        n = int(params.pop("n", 1) or 1)
        # the config's max_tokens caps the caller's: in the request sent and in its cache key
        params = capped(params, getattr(backend, "max_tokens", None))
        call_id, call = self._begin(role, backend, phase, messages, params)
        call.caller = caller
        key = request_key(backend.model, messages, params) + self.key_salt
        sample_index = self._next_sample_index(key, n)
        started = time.perf_counter()
        try:
            if self.call_wrapper is not None:
                completion = self.call_wrapper(backend, messages, n=n, sample_index=sample_index, key=key, **params)
            else:
                completion = backend.complete(messages, n=n, sample_index=sample_index, **params)
        except LLMError as exc:
            if self._end(call_id):
                unusable = list(getattr(exc, "unusable", None) or [])
                self._record_unusable(role, unusable, phase, caller)
                self._record_error(role, backend.model, exc, time.perf_counter() - started, phase, call.reservation,
                                   caller)
                self._journal(call.ticket, *_charged(unusable))
            raise
        except BaseException:
            if self._end(call_id):
                self._settle(call.reservation)
                self._journal(call.ticket, 0, 0, 0.0)
            raise
        latency = time.perf_counter() - started
        if self._end(call_id):  # else it was charged as cut off (the job ended while it ran)
            self._record_unusable(role, completion.unusable, phase, caller)
            self._record(role, completion, latency, phase, call.reservation, caller=caller)
            self._journal(call.ticket, *_charged([*completion.unusable, completion]))
        return ChatResponse.from_texts(completion.texts, completion.usage, completion.model)

    def _begin(self, role: str, backend: Backend, phase: str, messages: list[dict[str, Any]],
               params: dict[str, Any]) -> tuple[int, _Call]:
        """Reserve a ``train`` call's budget share, journal the call with what it costs if it is
        cut off, and keep it as in flight until :meth:`_end`."""
        prompt = estimate_prompt_tokens(messages)
        cap = completion_limit(params)
        estimate_cost = getattr(backend, "estimate_cost", None)
        usd_if_cut = estimate_cost(prompt, cap or 0) if callable(estimate_cost) else 0.0
        reservation: Spent | None = None
        if phase == "train":
            with self._lock:
                reservation = self.budget.reserve(self.spent(), prompt if self.budget.tokens is not None else 0)
        journal = self.journal
        ticket = journal.sent(prompt, phase=phase, completion_cap=cap, usd_if_cut=usd_if_cut or 0.0) if journal else None
        call = _Call(role, backend.model, phase, prompt, cap, usd_if_cut, reservation, ticket, time.perf_counter())
        with self._lock:
            call_id = next(self._call_ids)
            self._in_flight[call_id] = call
        return call_id, call

    def _end(self, call_id: int) -> bool:
        """True when the call was still in flight (False: :meth:`charge_cut_off` charged it)."""
        with self._lock:
            return self._in_flight.pop(call_id, None) is not None

    def charge_cut_off(self) -> int:
        """Charge every call still in flight as cut off: the job is ending (or stopping) and the
        provider bills what it received.  Each is recorded as an estimated call (its prompt, a
        completion up to its limit, their cost; ``cut_off: true`` in its ``llm_call`` event),
        counted in the totals, the budget and the journal; its answer, if it still comes, is not
        counted again.  Returns how many there were."""
        with self._lock:
            calls, self._in_flight = list(self._in_flight.values()), {}
        for call in calls:
            completion = call.completion_cap or 0
            usage = Usage(call.prompt_tokens, completion, call.prompt_tokens + completion)
            cut = Completion(texts=[], usage=usage, model=call.model, estimated=True, cost_usd=call.usd_if_cut)
            self._record(call.role, cut, time.perf_counter() - call.started, call.phase, call.reservation,
                         cut_off=True, caller=call.caller)
            self._journal(call.ticket, 1, usage.total_tokens, call.usd_if_cut or 0.0)
        return len(calls)

    def _record_unusable(self, role: str, attempts: list[Completion], phase: str, caller: str | None = None) -> None:
        """Charge the attempts the provider answered unusably (no choices, a truncated body) as calls
        of their own, estimated like calls cut off (``unusable: true`` in their ``llm_call`` event)."""
        for attempt in attempts:
            self._record(role, attempt, 0.0, phase, unusable=True, caller=caller)

    def _journal(self, ticket: int | None, calls: int, tokens: int, usd: float) -> None:
        if ticket is not None and self.journal is not None:
            self.journal.settled(ticket, llm_calls=calls, tokens=tokens, usd=usd)

    def _settle(self, reservation: Spent | None) -> None:
        if reservation is not None:
            with self._lock:
                self.budget.release(reservation)

    def _buckets(self, role: str, phase: str, caller: str | None) -> list[RoleUsage]:
        buckets = [self.totals, self.totals.by_role.setdefault(role, RoleUsage()),
                   self.totals.by_phase.setdefault(phase, RoleUsage())]
        if caller and phase == "train":
            buckets.append(self.totals.by_caller.setdefault(caller, RoleUsage()))
        return buckets

    def _record(self, role: str, completion: Completion, latency: float, phase: str = "train",
                reservation: Spent | None = None, cut_off: bool = False, unusable: bool = False,
                caller: str | None = None) -> None:
        usage = completion.usage
        cost = completion.cost_usd or 0.0
        with self._lock:
            if reservation is not None:
                self.budget.release(reservation)
            for bucket in self._buckets(role, phase, caller):
                bucket.add_call(prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                                total_tokens=usage.total_tokens, cost_usd=cost, cached=completion.cached,
                                retries=completion.retries, estimated=completion.estimated)
        self._emit({
            "type": "llm_call", "role": role, "model": completion.model,
            "prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
            "total_tokens": usage.total_tokens, "cost_usd": cost, "cost_known": completion.cost_usd is not None,
            "latency_s": round(latency, 6), "cached": completion.cached, "retries": completion.retries,
            "estimated": completion.estimated, "phase": phase, **({"cut_off": True} if cut_off else {}),
            **({"unusable": True} if unusable else {}), **({"caller": caller} if caller else {}),
        })

    def _record_error(self, role: str, model: str, exc: LLMError, latency: float, phase: str = "train",
                      reservation: Spent | None = None, caller: str | None = None) -> None:
        with self._lock:
            if reservation is not None:
                self.budget.release(reservation)
            self.last_error = exc
            for bucket in self._buckets(role, phase, caller):
                bucket.add_error(int(getattr(exc, "retries", 0) or 0))  # a call that failed retried too
        self._emit({
            "type": "llm_call", "role": role, "model": model, "error": f"{type(exc).__name__}: {exc}",
            "status": exc.status, "latency_s": round(latency, 6), "prompt_tokens": 0, "completion_tokens": 0,
            "total_tokens": 0, "cost_usd": 0.0, "cached": False, "retries": getattr(exc, "retries", 0),
            "phase": phase, **({"caller": caller} if caller else {}),
        })

    def _emit(self, event: dict[str, Any]) -> None:
        if self.events is not None:
            self.events(event)

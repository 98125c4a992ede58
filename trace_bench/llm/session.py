"""One job's LLM session: accounting, budget and per-role clients in one place.

Every call of every role of a job goes through :meth:`LLMSession.chat`, so the job's results
carry exact call, token and cost figures by role and by *phase*, and the budget is enforced
before each call is sent (:mod:`trace_bench.llm.budget`): a ``train`` call reserves its worst case
(:mod:`trace_bench.llm.calls`) and is refused if that could cross a limit.  A stub run's session
(``offline``) knows each answer before charging it and checks its exact usage instead.

Each call is metered under a *phase* (``train``, what budgets count, or ``measure``) and a
*caller* (``evaluator``, ``selection``): :mod:`trace_bench.llm.phases` says whose calls each is, and
:class:`~trace_bench.llm.phases.PhaseScopes` gives the session its ``measuring``/``selecting`` scopes.

A call answered from the record/replay cache is charged like the call it replays (its recorded
tokens and cost), so a replay stops where its recording stopped and draws the same curve;
``cache_hits`` counts such answers separately.

Every request the provider received is charged: an answer with its usage; an attempt never
answered usably (timed out, cut off by a lost connection, unusable, cancelled) as the backend
reports it (:mod:`trace_bench.llm.attempts`); a request still in flight when the job ends as cut
off (:meth:`LLMSession.charge_cut_off`).  The last two are estimated: the prompt bound and a
completion up to the request's limit.  Each request is written to the session's
:class:`SpendSink` (the job's spend journal) before it is sent and when it is settled, so that
what a killed attempt spent is carried into the next one and shown in its record.

Each call is also written to the session's :class:`TranscriptSink` (the job's transcript, when
it keeps one) as it ends, whichever way: its messages and answers, its role, phase, caller and
the trainer step in progress (:meth:`LLMSession.at_step`); see :mod:`trace_bench.llm.sinks`.
"""

from __future__ import annotations

import itertools
import threading
import time
from collections.abc import Callable
from typing import Any

from trace_bench.llm.attempts import attached
from trace_bench.llm.backend import Backend
from trace_bench.llm.budget import Budget
from trace_bench.llm.calls import (
    InFlight,
    Request,
    UsageTotals,
    call_event,
    charged,
    completion_allowance,
    error_event,
    prompt_bound,
    request_key,
    unit_costs,
)
from trace_bench.llm.caps import capped, completion_limit
from trace_bench.llm.client import MeteredLLM
from trace_bench.llm.errors import LLMError
from trace_bench.llm.phases import PhaseScopes, thread_caller, thread_phase
from trace_bench.llm.sinks import SpendSink, TranscriptSink, transcribe
from trace_bench.llm.types import ChatResponse, Completion, Usage
from trace_bench.store.models import RoleUsage, Spend

EventSink = Callable[[dict[str, Any]], None]


class _Ledger:
    """The session's side of :class:`~trace_bench.llm.attempts.AttemptLedger` for one call."""

    def __init__(self, session: LLMSession, call: InFlight) -> None:
        self.session, self.call = session, call

    def charged(self, attempt: Completion) -> None:  # one estimated call, settled at once
        self.session._settle_request(self.call, attempt, time.perf_counter() - self.call.started)

    def retrying(self) -> None:
        self.session._retry(self.call)


class LLMSession(PhaseScopes):
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
        super().__init__()
        self.backends = backends
        self.budget = budget or Budget()
        self.events = events
        self.default_role = default_role
        self.call_wrapper = call_wrapper
        self.key_salt = key_salt
        self.journal: SpendSink | None = None
        #: where each call's messages and answers are written (the job's transcript); None: nowhere
        self.transcript: TranscriptSink | None = None
        #: the trainer step in progress (:meth:`at_step`), which each call's transcript entry names
        self.step = 0
        #: a stub run's session: answers are known before they are charged (see :meth:`_offline_chat`)
        self.offline = False
        #: the first refusal no later call escapes (a refused key, a spent quota): (key variable, error)
        self.key_refusal: tuple[str, LLMError] | None = None
        self._closed = False
        self._in_flight: dict[int, InFlight] = {}
        self._call_ids = itertools.count()
        self._numbers = itertools.count(1)  # the calls' numbers in the transcript, in the order they were made
        self.totals = UsageTotals()
        self._samples: dict[str, int] = {}
        self._lock = threading.Lock()
        self._clients: dict[str, MeteredLLM] = {}
        # the last failed call: OptoPrimeMulti swallows LLM errors and fails later with an unrelated
        # one (IndexError), so the job can report this as the cause instead
        self.last_error: LLMError | None = None

    def at_step(self, step: int) -> None:
        """The trainer step in progress from now on: 0 while the initial state is measured, then
        one more than the last step reported (the job's recorder says so)."""
        self.step = step

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

    def spent(self) -> Spend:
        """What counts against the budget: the ``train`` phase (cache answers included)."""
        return self.totals.by_phase["train"].spend()

    def budget_spent(self) -> Spend:
        """Train-phase spend plus what earlier attempts spent, and wall time: the figures the
        limits apply to (``budget_spent`` of a job and ``spent`` of its ``budget_exhausted`` event)."""
        with self._lock:
            return self.budget.total(self.spent())

    def _next_sample_index(self, key: str, n: int) -> int:
        with self._lock:
            index = self._samples.get(key, 0)
            self._samples[key] = index + n
            return index

    def chat(self, role: str, messages: list[dict[str, Any]], *, phase: str | None = None,
             caller: str | None = None, **params: Any) -> ChatResponse:
        """One metered call.  ``phase`` overrides the calling thread's phase (a gateway knows
        whose calls it serves); a ``train`` call reserves its worst case against the budget first."""
        phase, caller = thread_phase(phase), thread_caller(caller)
        backend = self.backend_for(role)
        n = int(params.pop("n", 1) or 1)
        # the config's max_tokens caps the caller's: in the request sent and in its cache key
        params = capped(params, getattr(backend, "max_tokens", None))
        key = request_key(backend.model, messages, params) + self.key_salt
        sample_index = self._next_sample_index(key, n)
        request = Request(next(self._numbers), self.step, messages, params, key, n) if self.transcript else None
        if self.offline:
            return self._offline_chat(role, backend, phase, messages, n, sample_index, params, caller, request)
        refused = self.key_refusal
        if refused is not None and refused[0] == getattr(backend, "key_variable", None):
            error = type(refused[1])(str(refused[1]), status=refused[1].status)  # the key is dead: not sent again
            self._record_error(role, backend.model, error, 0.0, phase, caller)
            transcribe(self.transcript, request, role=role, model=backend.model, phase=phase, caller=caller,
                       error=f"{type(error).__name__}: {error} (not sent: the key was refused before)")
            raise error
        call_id, call = self._begin(role, backend, phase, messages, params, n, caller, request)
        started = time.perf_counter()
        try:
            with attached(_Ledger(self, call)):
                if self.call_wrapper is not None:
                    completion = self.call_wrapper(backend, messages, n=n, sample_index=sample_index, key=key, **params)
                else:
                    completion = backend.complete(messages, n=n, sample_index=sample_index, **params)
        except LLMError as exc:
            self._fail(call, exc, time.perf_counter() - started)
            raise
        except BaseException as exc:
            self._settle_request(call, None, stopped=exc)
            raise
        finally:
            with self._lock:
                self._in_flight.pop(call_id, None)
        self._settle_request(call, completion, time.perf_counter() - started)
        return ChatResponse.from_texts(completion.texts, completion.usage, completion.model)

    def _offline_chat(self, role: str, backend: Backend, phase: str, messages: list[dict[str, Any]], n: int,
                      sample_index: int, params: dict[str, Any], caller: str | None = None,
                      request: Request | None = None) -> ChatResponse:
        """A stub run's call: the stub knows its answer before anything is charged, so a ``train``
        call is refused exactly when its real usage would cross a limit (no worst case needed)."""
        started = time.perf_counter()
        completion = backend.complete(messages, n=n, sample_index=sample_index, **params)
        usage = completion.usage
        with self._lock:
            if self._closed:
                return ChatResponse.from_texts(completion.texts, usage, completion.model)
            if phase == "train":
                self.budget.check(self.spent(), Spend(llm_calls=1, tokens=usage.total_tokens,
                                                      usd=completion.cost_usd or 0.0))
            self._add(role, completion, phase, caller)
        journal = self.journal
        if journal is not None:
            ticket = journal.sent(usage.prompt_tokens, phase=phase, completion_cap=usage.completion_tokens)
            journal.settled(ticket, llm_calls=1, tokens=usage.total_tokens, usd=completion.cost_usd or 0.0)
        latency = time.perf_counter() - started
        self._emit_call(role, completion, latency, phase, caller)
        transcribe(self.transcript, request, role=role, model=backend.model, phase=phase, caller=caller,
                   completion=completion, latency=latency)
        return ChatResponse.from_texts(completion.texts, usage, completion.model)

    def _begin(self, role: str, backend: Backend, phase: str, messages: list[dict[str, Any]],
               params: dict[str, Any], n: int, caller: str | None = None,
               request: Request | None = None) -> tuple[int, InFlight]:
        """Reserve a ``train`` call's worst case (its prompt bound, ``n`` completions up to their
        limit, their cost), journal the request with what it costs if it is cut off, and keep it
        in flight.  A call with no completion limit under a tokens or USD budget is given one:
        what the budget has left (``max_tokens`` in ``params``, sent but not part of the cache key)."""
        prompt = prompt_bound(backend, messages)
        estimate_cost = getattr(backend, "estimate_cost", None)
        price = unit_costs(estimate_cost, prompt)
        with self._lock:
            if phase == "train" and self.budget.bounds_spend and completion_limit(params) is None:
                params["max_tokens"] = completion_allowance(self.budget, self.spent(), prompt, n, price)
            cap = completion_limit(params)
            completion = n * cap if cap else 0
            usd_if_cut = price[0] + completion * price[1] if price is not None else None
            need = Spend(llm_calls=1, tokens=prompt + completion, usd=usd_if_cut or 0.0)
            reservation = self.budget.reserve(self.spent(), need.tokens, need.usd) if phase == "train" else None
            call = InFlight(role, backend.model, phase, prompt, completion if cap else None, usd_if_cut, need,
                            reservation, None, time.perf_counter(),
                            key_variable=str(getattr(backend, "key_variable", "") or ""), caller=caller,
                            request=request)
            call_id = next(self._call_ids)
            self._in_flight[call_id] = call
        self._send(call)
        return call_id, call

    def _send(self, call: InFlight) -> None:
        journal = self.journal
        if journal is not None:
            ticket = journal.sent(call.prompt_tokens, phase=call.phase, completion_cap=call.completion_cap,
                                  usd_if_cut=call.usd_if_cut or 0.0)
            with self._lock:
                call.ticket = ticket if not call.cut else None
        else:
            call.ticket = -1  # in flight, with nowhere to journal it

    def _take(self, call: InFlight) -> tuple[int | None, bool]:
        """The request in flight's ticket, handed over once with its reservation released (under
        the lock); False when the call was charged as cut off meanwhile."""
        with self._lock:
            if call.cut:
                return None, False
            if call.reservation is not None:
                self.budget.release(call.reservation)
            ticket, call.reservation, call.ticket = call.ticket, None, None
            return ticket, True

    def _retry(self, call: InFlight) -> None:
        """Reserve the worst case of the next request of ``call`` (its last one was charged) and
        journal it; :class:`BudgetExhausted` when it does not fit."""
        with self._lock:
            if call.cut:
                return
            if call.phase == "train":
                call.reservation = self.budget.reserve(self.spent(), call.need.tokens, call.need.usd)
            call.started = time.perf_counter()
        self._send(call)

    def _settle_request(self, call: InFlight, completion: Completion | None, latency: float = 0.0,
                        stopped: BaseException | None = None) -> None:
        """The request in flight ended: answered (``completion``), charged unanswered (a completion
        with ``unanswered`` set), or abandoned (None, by ``stopped``: nothing the backend did not
        charge reached the provider)."""
        ticket, live = self._take(call)
        if not live:
            return  # charged as cut off (the job ended while it ran)
        if completion is None:
            self._journal(ticket, 0, 0, 0.0)
            self._transcribe(call, error=f"stopped without an answer by {type(stopped).__name__}: {stopped}"
                             if stopped is not None else "stopped without an answer")
            return
        with self._lock:
            self._add(call.role, completion, call.phase, call.caller)
        self._journal(ticket, *charged(completion))
        self._emit_call(call.role, completion, latency, call.phase, call.caller)
        self._transcribe(call, completion, latency)

    def _transcribe(self, call: InFlight, completion: Completion | None = None, latency: float | None = None,
                    error: str | None = None) -> None:
        transcribe(self.transcript, call.request, role=call.role, model=call.model, phase=call.phase,
                   caller=call.caller, completion=completion, latency=latency, error=error)

    def _fail(self, call: InFlight, exc: LLMError, latency: float) -> None:
        ticket, live = self._take(call)
        if not live:
            return
        self._journal(ticket, 0, 0, 0.0)
        self._record_error(call.role, call.model, exc, latency, call.phase, call.caller)
        self._transcribe(call, latency=latency, error=f"{type(exc).__name__}: {exc}")
        if exc.key_refused:
            with self._lock:
                if self.key_refusal is None:
                    self.key_refusal = (call.key_variable, exc)

    def charge_cut_off(self) -> int:
        """Charge every request still in flight as cut off: the job is ending (or stopping) and
        the provider bills what it received.  Each is recorded as an estimated call (its prompt
        bound, a completion up to its limit, their cost; ``cut_off: true`` in its ``llm_call``
        event), counted in the totals, the budget and the journal; its answer, if it still comes,
        is not counted again, nor is any later request of the call.  Returns how many there were."""
        with self._lock:
            self._closed = True
            calls, self._in_flight = list(self._in_flight.values()), {}
            cut = []
            for call in calls:
                if call.cut:
                    continue
                call.cut = True
                if call.reservation is not None:
                    self.budget.release(call.reservation)
                    call.reservation = None
                if call.ticket is not None:
                    cut.append((call, call.ticket))
                    call.ticket = None
        for call, ticket in cut:
            completion = call.completion_cap or 0
            usage = Usage(call.prompt_tokens, completion, call.prompt_tokens + completion)
            charge = Completion(texts=[], usage=usage, model=call.model, estimated=True, cost_usd=call.usd_if_cut,
                                unanswered="cut_off")
            with self._lock:
                self._add(call.role, charge, call.phase, call.caller)
            self._journal(ticket, *charged(charge))
            latency = time.perf_counter() - call.started
            self._emit_call(call.role, charge, latency, call.phase, call.caller)
            self._transcribe(call, charge, latency)
        return len(cut)

    def _journal(self, ticket: int | None, calls: int, tokens: int, usd: float) -> None:
        if ticket is not None and ticket >= 0 and self.journal is not None:
            self.journal.settled(ticket, llm_calls=calls, tokens=tokens, usd=usd)

    def _add(self, role: str, completion: Completion, phase: str, caller: str | None = None) -> None:
        """Count ``completion`` in every bucket (the caller holds the lock)."""
        self.totals.count_call(role, phase, caller, completion)

    def _emit_call(self, role: str, completion: Completion, latency: float, phase: str,
                   caller: str | None = None) -> None:
        self._emit(call_event(role, completion, latency, phase, caller))

    def _record_error(self, role: str, model: str, exc: LLMError, latency: float, phase: str = "train",
                      caller: str | None = None) -> None:
        with self._lock:
            self.last_error = exc
            self.totals.count_error(role, phase, caller, int(getattr(exc, "retries", 0) or 0))
        self._emit(error_event(role, model, exc, latency, phase, caller))

    def _emit(self, event: dict[str, Any]) -> None:
        if self.events is not None:
            self.events(event)

"""Per-job budgets: a call reserves its worst case before it is sent and settles after.

Only the trainer's calls (the ``train`` phase) count; the harness's own measurements do not.  A
call may start only if what is spent, plus what earlier attempts spent (``carried``), plus what
calls in flight have reserved, plus the call's own worst case, stays within every limit.  The
worst case (:meth:`Budget.reserve`'s ``tokens`` and ``usd``) is one call, a bound of its prompt
that is never below the provider's count (:mod:`trace_bench.llm.tokens`) plus its completion
limit, and what those cost; the session computes it.  When the call settles, the reservation is
replaced by what the call really cost, which is at most the worst case: so a limit is never
crossed, by concurrent calls either (``num_threads: 8`` with ``llm_calls: 5`` makes exactly 5
calls), as long as the provider honours ``max_tokens`` and the model's price is known (see
docs/llm.md, "Budgets").  A retry of an attempt the provider received and billed (a timeout, an
unusable answer) is a call of its own and reserves again.

The owner (:class:`~trace_bench.llm.session.LLMSession`) calls :meth:`Budget.reserve` and
:meth:`Budget.release` under the same lock as it records usage, so reserving, settling and
counting never interleave.

``evaluations`` limits the trainer's task evaluations (rollouts, LLM or not): the trainer's evaluator
asks :meth:`Budget.check_evaluations` before each one (an evaluation is a cost of every trainer, the
non-LLM baselines' only one); it is not carried across attempts (a resumed job trains again).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from trace_bench.llm.errors import BudgetExhausted


@dataclass
class Spent:
    llm_calls: int = 0
    tokens: int = 0
    usd: float = 0.0
    wall_s: float = 0.0


@dataclass
class Budget:
    """Limits for one job; ``None`` means unlimited.  ``carried`` is what earlier attempts spent."""

    llm_calls: int | None = None
    tokens: int | None = None
    usd: float | None = None
    wall_s: float | None = None
    carried: Spent = field(default_factory=Spent)
    evaluations: int | None = None
    started: float = field(default_factory=time.monotonic)
    reserved: Spent = field(default_factory=Spent)

    def elapsed(self) -> float:
        return self.carried.wall_s + (time.monotonic() - self.started)

    def total(self, spent: Spent) -> Spent:
        """``spent`` plus what earlier attempts spent: the figures the limits apply to."""
        return Spent(spent.llm_calls + self.carried.llm_calls, spent.tokens + self.carried.tokens,
                     spent.usd + self.carried.usd, self.elapsed())

    def committed(self, spent: Spent) -> Spent:
        """What is spent (earlier attempts included) plus what calls in flight reserved."""
        total = self.total(spent)
        return Spent(total.llm_calls + self.reserved.llm_calls, total.tokens + self.reserved.tokens,
                     total.usd + self.reserved.usd, total.wall_s)

    def check(self, spent: Spent, need: Spent | None = None) -> None:
        """Raise :class:`BudgetExhausted` when a call needing ``need`` (its worst case; default: one
        call and nothing else) would cross a limit on top of what is spent and in flight."""
        need = need or Spent(llm_calls=1)
        committed = self.committed(spent)
        if self.llm_calls is not None and committed.llm_calls + need.llm_calls > self.llm_calls:
            raise BudgetExhausted("llm_calls", self.llm_calls, committed.llm_calls)
        if self.tokens is not None and committed.tokens + need.tokens > self.tokens:
            raise BudgetExhausted("tokens", self.tokens, committed.tokens, needed=need.tokens)
        if self.usd is not None and committed.usd + need.usd > self.usd:
            raise BudgetExhausted("usd", self.usd, committed.usd, needed=need.usd)
        self.check_wall()

    def headroom(self, spent: Spent) -> Spent:
        """What the tokens and USD limits leave for one more call (``-1`` / ``inf`` when unlimited)."""
        committed = self.committed(spent)
        return Spent(tokens=self.tokens - committed.tokens if self.tokens is not None else -1,
                     usd=self.usd - committed.usd if self.usd is not None else float("inf"))

    def reserve(self, spent: Spent, tokens: int = 0, usd: float = 0.0) -> Spent:
        """Check, then hold one call with its worst case (``tokens``, ``usd``) for a call about to
        be sent; returns the reservation for :meth:`release`."""
        reservation = Spent(llm_calls=1, tokens=int(tokens) if self.tokens is not None else 0,
                            usd=float(usd) if self.usd is not None else 0.0)
        self.check(spent, reservation)
        self.reserved.llm_calls += reservation.llm_calls
        self.reserved.tokens += reservation.tokens
        self.reserved.usd += reservation.usd
        return reservation

    def release(self, reservation: Spent) -> None:
        self.reserved.llm_calls -= reservation.llm_calls
        self.reserved.tokens -= reservation.tokens
        self.reserved.usd -= reservation.usd

    def check_evaluations(self, done: int) -> None:
        """Raise :class:`BudgetExhausted` when ``done`` evaluations leave none for the next one."""
        if self.evaluations is not None and done >= self.evaluations:
            raise BudgetExhausted("evaluations", self.evaluations, done)

    def check_wall(self) -> None:
        if self.wall_s is not None and self.elapsed() >= self.wall_s:
            raise BudgetExhausted("wall_s", self.wall_s, self.elapsed())

    @property
    def limited(self) -> bool:
        return any(v is not None for v in (self.llm_calls, self.tokens, self.usd, self.wall_s, self.evaluations))

    @property
    def bounds_spend(self) -> bool:
        """Whether a limit needs each call's worst case (tokens or USD)."""
        return self.tokens is not None or self.usd is not None

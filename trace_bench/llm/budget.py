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

from trace_bench.config.models import BudgetConfig
from trace_bench.llm.errors import BudgetExhausted
from trace_bench.store.models import Spend


@dataclass
class Budget:
    """One job's budget: its ``limits``, the config's block (an unset limit is unlimited), and
    ``carried``, what earlier attempts spent."""

    limits: BudgetConfig = field(default_factory=BudgetConfig)
    carried: Spend = field(default_factory=Spend)
    started: float = field(default_factory=time.monotonic)
    reserved: Spend = field(default_factory=Spend)

    def elapsed(self) -> float:
        return (self.carried.wall_s or 0.0) + (time.monotonic() - self.started)

    def total(self, spent: Spend) -> Spend:
        """``spent`` plus what earlier attempts spent: the figures the limits apply to."""
        return Spend(llm_calls=spent.llm_calls + self.carried.llm_calls, tokens=spent.tokens + self.carried.tokens,
                     usd=spent.usd + self.carried.usd, wall_s=self.elapsed())

    def committed(self, spent: Spend) -> Spend:
        """What is spent (earlier attempts included) plus what calls in flight reserved."""
        total = self.total(spent)
        return Spend(llm_calls=total.llm_calls + self.reserved.llm_calls, tokens=total.tokens + self.reserved.tokens,
                     usd=total.usd + self.reserved.usd, wall_s=total.wall_s)

    def check(self, spent: Spend, need: Spend | None = None) -> None:
        """Raise :class:`BudgetExhausted` when a call needing ``need`` (its worst case; default: one
        call and nothing else) would cross a limit on top of what is spent and in flight."""
        need = need or Spend(llm_calls=1)
        committed, limits = self.committed(spent), self.limits
        if limits.llm_calls is not None and committed.llm_calls + need.llm_calls > limits.llm_calls:
            raise BudgetExhausted("llm_calls", limits.llm_calls, committed.llm_calls)
        if limits.tokens is not None and committed.tokens + need.tokens > limits.tokens:
            raise BudgetExhausted("tokens", limits.tokens, committed.tokens, needed=need.tokens)
        if limits.usd is not None and committed.usd + need.usd > limits.usd:
            raise BudgetExhausted(Spend.COST, limits.usd, committed.usd, needed=need.usd)
        self.check_wall()

    def headroom(self, spent: Spend) -> Spend:
        """What the tokens and USD limits leave for one more call (``-1`` / ``inf`` when unlimited)."""
        committed, limits = self.committed(spent), self.limits
        return Spend(tokens=limits.tokens - committed.tokens if limits.tokens is not None else -1,
                     usd=limits.usd - committed.usd if limits.usd is not None else float("inf"))

    def reserve(self, spent: Spend, tokens: int = 0, usd: float = 0.0) -> Spend:
        """Check, then hold one call with its worst case (``tokens``, ``usd``) for a call about to
        be sent; returns the reservation for :meth:`release`."""
        reservation = Spend(llm_calls=1, tokens=int(tokens) if self.limits.tokens is not None else 0,
                            usd=float(usd) if self.limits.usd is not None else 0.0)
        self.check(spent, reservation)
        self.reserved.llm_calls += reservation.llm_calls
        self.reserved.tokens += reservation.tokens
        self.reserved.usd += reservation.usd
        return reservation

    def release(self, reservation: Spend) -> None:
        self.reserved.llm_calls -= reservation.llm_calls
        self.reserved.tokens -= reservation.tokens
        self.reserved.usd -= reservation.usd

    def check_evaluations(self, done: int) -> None:
        """Raise :class:`BudgetExhausted` when ``done`` evaluations leave none for the next one."""
        if self.limits.evaluations is not None and done >= self.limits.evaluations:
            raise BudgetExhausted("evaluations", self.limits.evaluations, done)

    def check_wall(self) -> None:
        if self.limits.wall_s is not None and self.elapsed() >= self.limits.wall_s:
            raise BudgetExhausted("wall_s", self.limits.wall_s, self.elapsed())

    @property
    def limited(self) -> bool:
        return any(value is not None for value in self.limits.model_dump().values())

    @property
    def bounds_spend(self) -> bool:
        """Whether a limit needs each call's worst case (tokens or USD)."""
        return self.limits.tokens is not None or self.limits.usd is not None

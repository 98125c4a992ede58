"""Per-job budgets: a call reserves its share before it is sent and settles after.

Only the trainer's calls (the ``train`` phase) count; the harness's own measurements do not.  A
call may start only if what is spent, plus what earlier attempts spent (``carried``), plus what
calls in flight have reserved, is still below every limit; it reserves one call and the tokens its
prompt is estimated to take, and gives the reservation back when it settles (its real usage is
then counted as spent).  So ``num_threads: 8`` with ``llm_calls: 5`` makes at most 5 calls, and a
``tokens`` limit can be overshot only by the completions of calls already in flight.

The owner (:class:`~trace_bench.llm.session.LLMSession`) calls :meth:`Budget.reserve` and
:meth:`Budget.release` under the same lock as it records usage, so reserving, settling and
counting never interleave.
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
    started: float = field(default_factory=time.monotonic)
    reserved: Spent = field(default_factory=Spent)

    def elapsed(self) -> float:
        return self.carried.wall_s + (time.monotonic() - self.started)

    def total(self, spent: Spent) -> Spent:
        """``spent`` plus what earlier attempts spent: the figures the limits apply to."""
        return Spent(spent.llm_calls + self.carried.llm_calls, spent.tokens + self.carried.tokens,
                     spent.usd + self.carried.usd, self.elapsed())

    def check(self, spent: Spent) -> None:
        """Raise :class:`BudgetExhausted` when a limit is reached by what is spent and in flight."""
        total = self.total(spent)
        if self.llm_calls is not None and total.llm_calls + self.reserved.llm_calls >= self.llm_calls:
            raise BudgetExhausted("llm_calls", self.llm_calls, total.llm_calls + self.reserved.llm_calls)
        if self.tokens is not None and total.tokens + self.reserved.tokens >= self.tokens:
            raise BudgetExhausted("tokens", self.tokens, total.tokens + self.reserved.tokens)
        if self.usd is not None and total.usd >= self.usd:
            raise BudgetExhausted("usd", self.usd, total.usd)
        self.check_wall()

    def reserve(self, spent: Spent, prompt_tokens: int) -> Spent:
        """Check, then hold one call and ``prompt_tokens`` for a call about to be sent."""
        self.check(spent)
        reservation = Spent(llm_calls=1, tokens=prompt_tokens if self.tokens is not None else 0)
        self.reserved.llm_calls += reservation.llm_calls
        self.reserved.tokens += reservation.tokens
        return reservation

    def release(self, reservation: Spent) -> None:
        self.reserved.llm_calls -= reservation.llm_calls
        self.reserved.tokens -= reservation.tokens

    def check_wall(self) -> None:
        if self.wall_s is not None and self.elapsed() >= self.wall_s:
            raise BudgetExhausted("wall_s", self.wall_s, self.elapsed())

    @property
    def limited(self) -> bool:
        return any(v is not None for v in (self.llm_calls, self.tokens, self.usd, self.wall_s))

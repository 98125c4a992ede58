"""Per-job budgets, checked before every LLM call."""

from __future__ import annotations

import threading
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
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def elapsed(self) -> float:
        return self.carried.wall_s + (time.monotonic() - self.started)

    def check(self, spent: Spent) -> None:
        """Raise :class:`BudgetExhausted` when any limit is reached (call before spending more)."""
        total_calls = spent.llm_calls + self.carried.llm_calls
        total_tokens = spent.tokens + self.carried.tokens
        total_usd = spent.usd + self.carried.usd
        if self.llm_calls is not None and total_calls >= self.llm_calls:
            raise BudgetExhausted("llm_calls", self.llm_calls, total_calls)
        if self.tokens is not None and total_tokens >= self.tokens:
            raise BudgetExhausted("tokens", self.tokens, total_tokens)
        if self.usd is not None and total_usd >= self.usd:
            raise BudgetExhausted("usd", self.usd, total_usd)
        self.check_wall()

    def check_wall(self) -> None:
        if self.wall_s is not None and self.elapsed() >= self.wall_s:
            raise BudgetExhausted("wall_s", self.wall_s, self.elapsed())

    @property
    def limited(self) -> bool:
        return any(v is not None for v in (self.llm_calls, self.tokens, self.usd, self.wall_s))

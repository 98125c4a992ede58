"""How much of its budget a job spent, and why it left some unspent (``under_spent``).

A comparison at equal budget needs equal *spend*: an arm that stops at 2 of its 12 calls is
compared at 2 calls, not 12.  So every budgeted job says which share of its budget it spent
(``budget_used``: the largest share of any limit, 1.0 when one was reached) and, when it left more
than :data:`UNDER_SPENT_MARGIN` of it, why (``under_spent_reason``, one of :data:`REASONS` then a
colon and the explanation).  Both are derived from the record itself (its specification's
budget, what it spent, its status), so a record read from an older file says the same.

Under a budget a trainer's iteration knob is freed to :data:`UNBOUNDED_ITERATIONS` unless the
config set it (``Trainer.free_for_budget``), so a job of a trainer that stopped early with its knob
freed stopped by its own rule (converged, or a stopping rule of its library).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from trace_bench.config.models import BudgetConfig
from trace_bench.store.status import FAILED, Status

#: the value a freed iteration knob holds under a budget: more iterations than any budget buys, so the
#: budget ends the trainer (trainers take it from here: one definition)
UNBOUNDED_ITERATIONS = 100_000
#: a job that leaves more than this share of its budget unspent is ``under_spent``
UNDER_SPENT_MARGIN = 0.10
#: the reasons' codes, in the order a reader checks them
REASONS = ("error", "reservation", "trainer_rule", "knob")
#: the limits a budget can set, as the config declares them
LIMITS: tuple[str, ...] = tuple(BudgetConfig.model_fields)


def budget_limits(budget: Any) -> dict[str, float]:
    """The limits a job's budget sets (a mapping or a model), by name; empty without a budget."""
    values = budget.model_dump() if hasattr(budget, "model_dump") else dict(budget or {})
    return {name: float(values[name]) for name in LIMITS if values.get(name)}


def budget_used(budget: Any, spent: Mapping[str, float]) -> float | None:
    """The largest share of a limit the job spent (1.0: a limit reached); None without a budget,
    or without a record of what it spent."""
    limits = budget_limits(budget)
    if not limits or not spent:
        return None
    return round(max(float(spent.get(name) or 0.0) / limit for name, limit in limits.items()), 4)


def under_spent_reason(status: Status | str, used: float | None, trainer_kwargs: Mapping[str, Any]) -> str:
    """Why a job left more than the margin of its budget unspent ('' when it did not)."""
    if used is None or used >= 1.0 - UNDER_SPENT_MARGIN:
        return ""
    status = Status(status)
    if status in FAILED or status == Status.INTERRUPTED:
        return f"error: the job ended {status} before its budget was spent"
    if status == Status.BUDGET_EXHAUSTED:
        return ("reservation: the next call's worst case (its prompt plus max_tokens) did not fit in what the "
                "budget left")
    if status == Status.SKIPPED:
        return "error: the job was skipped"
    freed = [name for name, value in trainer_kwargs.items() if value == UNBOUNDED_ITERATIONS]
    if freed:
        return (f"trainer_rule: the trainer stopped on its own with {', '.join(freed)} freed (it converged, or a "
                "stopping rule of its own ended it)")
    return ("knob: no iteration knob was freed (the config set it, or the trainer frees none: see "
            "`trace-bench list-trainers --all`)")

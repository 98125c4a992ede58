"""A job's best-so-far state under the task's objective: what the harness reports as *best*.

Every state the harness measures (initial, each step, final) is offered with its selection score
and per-objective means.  In ``scalar`` and ``weighted`` mode the best is the highest score (the
earlier state wins a tie).  In ``pareto`` mode the archive keeps the non-dominated states (the
front; a state equal on every metric to a kept one is not added) and the best is the front's
first member by :func:`~trace_bench.trainers.objectives.front_order`, by default the one closest
to the ideal point: so ``pareto`` and ``weighted`` differ exactly when the balanced trade-off is
not the weighted sum's favourite.  Its ``best_score`` is still the weighted scalarization, so it
may go *down* when a more balanced state joins the front.  States with a non-finite score are
never kept.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from trace_bench.trainers.objectives import ObjectiveConfig, front_order, pareto_front


@dataclass
class Entry:
    state: list[Any]
    score: float
    score_dict: dict[str, float]
    order: int
    step: int | None = None


def objective_names(score_dict: dict[str, float]) -> list[str]:
    """The per-objective metrics of a score dict (``score`` alone means single-objective)."""
    return sorted(k for k in score_dict if k != "score")


@dataclass
class BestStates:
    """Best-so-far bookkeeping of one job (see the module docstring)."""

    objective: ObjectiveConfig | None = None
    steps: int = 0
    front: list[Entry] = field(default_factory=list)
    _best: Entry | None = None
    _offered: int = 0

    @property
    def pareto(self) -> bool:
        return self.objective is not None and self.objective.mode == "pareto"

    @property
    def best_score(self) -> float | None:
        return None if self._best is None else self._best.score

    @property
    def best_state(self) -> list[Any] | None:
        return None if self._best is None else self._best.state

    @property
    def best_score_dict(self) -> dict[str, float]:
        return {} if self._best is None else dict(self._best.score_dict)

    @property
    def best_step(self) -> int | None:
        return None if self._best is None else self._best.step

    def offer(self, score: float | None, state: list[Any], score_dict: dict[str, float],
              step: int | None = None) -> bool:
        """Consider a measured state; True when the best changed (in ``pareto`` mode the new best
        may be an earlier front member: adding a state renormalizes the front)."""
        if score is None or not math.isfinite(score):
            return False
        self._offered += 1
        entry = Entry(list(state), float(score), dict(score_dict), self._offered, step)
        if not self.pareto:
            if self._best is None or entry.score > self._best.score:
                self._best = entry
                return True
            return False
        return self._offer_pareto(entry)

    def _offer_pareto(self, entry: Entry) -> bool:
        assert self.objective is not None
        if any(kept.score_dict == entry.score_dict for kept in self.front):
            return False
        candidates = [*self.front, entry]
        kept = pareto_front([c.score_dict for c in candidates], self.objective)
        if len(candidates) - 1 not in kept:
            return False
        self.front = [candidates[i] for i in kept]
        order = front_order([c.score_dict for c in self.front], self.objective)
        pick = self.front[order[0]] if order else entry
        changed = pick is not self._best
        self._best = pick
        return changed

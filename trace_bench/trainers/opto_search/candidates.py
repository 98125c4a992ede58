"""Candidates shared by the search trainers: a state, its optimizer and its rollout statistics.

Statistics are cumulative (every rollout a candidate ever got, from training or validation), and
only scores and score dicts are kept: the traced output nodes of a rollout are dropped once the
optimizer has seen them, which is what the original's "compressed" long-term memory does.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

from trace_bench.trainers.evaluate import Rollout
from trace_bench.trainers.objectives import mean_score_dict
from trace_bench.trainers.state import State, state_key

_COUNTER = itertools.count()


@dataclass
class Candidate:
    state: State
    optimizer: Any = None
    scores: list[float] = field(default_factory=list)
    score_dicts: list[dict[str, float]] = field(default_factory=list)
    created: int = field(default_factory=lambda: next(_COUNTER))
    parents: tuple[int, ...] = ()

    @property
    def key(self) -> str:
        return state_key(self.state)

    @property
    def n(self) -> int:
        return len(self.scores)

    @property
    def mean(self) -> float | None:
        return sum(self.scores) / len(self.scores) if self.scores else None

    def add(self, scores: list[float], score_dicts: list[dict[str, float]] | None = None) -> None:
        self.scores.extend(scores)
        if score_dicts:
            self.score_dicts.extend(score_dicts)

    def add_rollouts(self, rollouts: list[Rollout]) -> None:
        self.add([r.score for r in rollouts], [r.score_dict for r in rollouts])

    def stats(self) -> tuple[float, dict[str, float]]:
        """(mean score, mean score dict) for :mod:`.selection`; NaN when never evaluated."""
        mean = self.mean
        return (math.nan if mean is None else mean), mean_score_dict(self.score_dicts)

    def ucb(self, total: int, constant: float, score_range: tuple[float, float] | None) -> float:
        """mean + c * sqrt(ln(total) / n) * (max - min), clipped to ``score_range``."""
        if not self.scores:
            return math.inf
        width = (score_range[1] - score_range[0]) if score_range else 1.0
        bonus = constant * math.sqrt(math.log(max(total, 2)) / self.n) * width
        value = (self.mean or 0.0) + bonus
        if score_range:
            value = min(max(value, score_range[0]), score_range[1])
        return value

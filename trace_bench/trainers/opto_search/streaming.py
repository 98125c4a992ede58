"""StreamingPrioritySearch: PrioritySearch whose evaluation streams with training.

There is no separate validation.  New proposals enter memory without rollouts, so they carry the
maximal priority and are explored, and thereby evaluated, on the next training batch.  To keep
the number of LLM calls in check, only K of the (explorer, sub-batch) pairs are improved upon
each iteration, drawn by softmax over the explorers' priorities without replacement.  Each
exploration rollout is added to its candidate exactly once (the original adds it up to three
times, which inflates ``n`` and narrows UCB widths).

Because a proposal is scored one iteration after it is made, the last iteration only scores: it
asks for no proposals, which could never be evaluated (the original spends LLM calls on them).
With ``num_steps`` unset, the epochs give the proposal iterations and one scoring iteration is
added, so the defaults search even on a one-example dataset (two iterations, not one that could
never improve).
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import Field

from trace_bench.trainers.opto_search import selection
from trace_bench.trainers.opto_search.candidates import Candidate
from trace_bench.trainers.opto_search.priority_search import (
    PS_ALIASES,
    Pair,
    PrioritySearch,
    PrioritySearchParams,
)


class StreamingPrioritySearchParams(PrioritySearchParams):
    exploration_ratio: float = Field(default=0.5, gt=0, description="share of num_candidates improved")
    exploration_temperature: float = Field(default=1.0, gt=0, description="softmax temperature")


class StreamingPrioritySearch(PrioritySearch):
    Params = StreamingPrioritySearchParams
    knob_aliases = PS_ALIASES

    params: StreamingPrioritySearchParams
    last_step: int = 0

    def planned_steps(self, dataset_size: int) -> int:
        """``num_steps`` when set; else the epochs' iterations plus one that scores their proposals."""
        steps = super().planned_steps(dataset_size)
        if self.params.num_steps is None and steps > 0:
            steps += 1
        self.last_step = steps
        return steps

    def proposal_budget(self, n_pairs: int, n_explorers: int) -> int:
        """K: about num_candidates x exploration_ratio / num_proposals, at least 1; raised when memory
        and explorers cannot fill the next exploration, capped at num_candidates / num_proposals."""
        p = self.params
        k = max(1, round(p.num_candidates * p.exploration_ratio / p.num_proposals))
        shortfall = p.num_candidates - (len(self.pool()) + n_explorers)
        if shortfall > 0:
            k = max(k, math.ceil(shortfall / p.num_proposals))
        k = min(k, max(1, p.num_candidates // p.num_proposals))
        return min(k, n_pairs)

    def select_pairs(self, pairs: list[Pair]) -> list[Pair]:
        if self.last_step and self.iteration >= self.last_step:
            return []  # no later iteration would score these proposals
        explorers = {id(explorer) for explorer, _ in pairs}
        k = self.proposal_budget(len(pairs), len(explorers))
        weights = [self.priority(explorer) for explorer, _ in pairs]
        picked = selection.softmax_sample(self.ctx.rng, weights, k, self.params.exploration_temperature)
        return [pairs[i] for i in sorted(picked)]

    def validate(self, explorers: list[Candidate], new: list[Candidate], inputs: list[Any],
                 infos: list[Any]) -> None:
        """Nothing to score: new candidates wait, at maximal priority, for the next training batch."""

"""MinibatchAlgorithm and BasicSearchAlgorithm: one current state, improved batch by batch.

Minibatch runs the agent on a shuffled batch, batches outputs and feedback into one backward and
applies one proposal.  With ``ensure_improvement`` it re-scores the same batch and rolls back
when the new score is not above ``old - improvement_threshold``.  BasicSearch draws
``num_proposals`` proposals from the same feedback instead, scores each on the whole validation
set (the training set when the task has none) and keeps the best, the current state included.
"""

from __future__ import annotations

import math
from typing import Any

from pydantic import Field

from trace_bench.trainers.base import Trainer
from trace_bench.trainers.evaluate import Rollout
from trace_bench.trainers.opto_search import selection
from trace_bench.trainers.opto_search.knobs import SearchParams
from trace_bench.trainers.state import State, state_key


class MinibatchParams(SearchParams):
    num_epochs: int = Field(default=1, ge=0)
    num_steps: int | None = Field(default=None, ge=0, description="iterations; when unset, num_epochs epochs")
    batch_size: int = Field(default=1, ge=1)
    ensure_improvement: bool = True
    improvement_threshold: float = 0.0
    min_score: float | None = Field(default=None, description="accepted; failures score the failure_score")


class MinibatchAlgorithm(Trainer[MinibatchParams]):
    Params = MinibatchParams
    knob_aliases = {"train_batch_size": "batch_size"}

    def __init__(self, context: Any, params: MinibatchParams) -> None:
        super().__init__(context, params)
        self.optimizer: Any = None

    def planned_steps(self, dataset_size: int) -> int:
        if self.params.num_steps is not None:
            return self.params.num_steps
        return self.params.num_epochs * max(1, math.ceil(dataset_size / self.params.batch_size))

    def train(self) -> None:
        ctx = self.ctx
        self.optimizer = ctx.make_optimizer()
        state = ctx.current_state()
        loader = ctx.loader(batch_size=self.params.batch_size)
        for _ in range(self.planned_steps(len(loader))):
            ctx.check_budget()
            inputs, infos = loader.next_batch()
            rollouts = ctx.run_batch(state, inputs, infos)
            old_score, _ = ctx.score_of(rollouts)
            candidate = self.search(state, rollouts)
            accepted = candidate is not None
            if candidate is not None and self.params.ensure_improvement:
                new_score, _ = ctx.score_of(ctx.run_batch(candidate, inputs, infos))
                accepted = not new_score <= old_score - self.params.improvement_threshold
            if accepted and candidate is not None:
                state = candidate
            ctx.apply(state)
            ctx.report_step(state, accepted=accepted, batch_score=old_score)
        ctx.apply(state)

    def search(self, state: State, rollouts: list[Rollout]) -> State | None:
        """The next state from this batch's feedback, or None when the optimizer proposed nothing."""
        proposals = self.ctx.propose(self.optimizer, rollouts, state, n=1, clone=False)
        return proposals[0][0] if proposals else None


class BasicSearchParams(MinibatchParams):
    num_proposals: int = Field(default=4, ge=1)


class BasicSearchAlgorithm(MinibatchAlgorithm):
    Params = BasicSearchParams
    params: BasicSearchParams

    def __init__(self, context: Any, params: BasicSearchParams) -> None:
        super().__init__(context, params)
        self.current_stats: tuple[str, selection.Stats] | None = None

    def validation_stats(self, state: State) -> selection.Stats:
        result = self.ctx.evaluate(state, self.ctx.validation_dataset)
        return result.score, result.score_dict

    def search(self, state: State, rollouts: list[Rollout]) -> State | None:
        ctx = self.ctx
        p = self.params
        proposals = ctx.propose(self.optimizer, rollouts, state, n=p.num_proposals, clone=False)
        if not proposals:
            return None
        key = state_key(state)
        if self.current_stats is None or self.current_stats[0] != key:
            self.current_stats = (key, self.validation_stats(state))
        scored: list[tuple[State, selection.Stats]] = [(state, self.current_stats[1])]
        seen = {key}
        for proposal, _ in proposals:
            proposal_key = state_key(proposal)
            if proposal_key not in seen:
                seen.add(proposal_key)
                scored.append((proposal, self.validation_stats(proposal)))
        chosen, stats = selection.best(scored, lambda item: item[1], ctx.objective)
        self.current_stats = (state_key(chosen), stats)
        return None if chosen is state else chosen

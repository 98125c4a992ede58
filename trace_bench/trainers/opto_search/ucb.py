"""UCBSearchAlgorithm: a small buffer of states explored as a bandit.

Each buffer entry keeps a running score sum and evaluation count; T counts every evaluation.
Every iteration picks the entry with the highest UCB = mean + c * sqrt(ln T / n) (+inf when never
evaluated; no range scaling, as in the original), improves it with one proposal from a random
training minibatch, scores the child on a fresh random validation sample and adds it, evicting
the lowest-UCB entry when the buffer is full.  The parent's *training* batch score also goes into
its running mean, so training and validation scores mix in one mean, as in the original.  The
reported (and finally applied) state is the entry with the best mean.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from pydantic import Field

from trace_bench.trainers.base import Trainer
from trace_bench.trainers.evaluate import Rollout
from trace_bench.trainers.objectives import mean_score_dict
from trace_bench.trainers.opto_search import selection
from trace_bench.trainers.opto_search.knobs import SearchParams
from trace_bench.trainers.state import State, state_key


class UCBSearchParams(SearchParams):
    max_buffer_size: int = Field(default=10, ge=1)
    ucb_exploration_factor: float = Field(default=1.0, ge=0)
    num_search_iterations: int = Field(default=100, ge=0)
    train_batch_size: int = Field(default=2, ge=1)
    evaluation_batch_size: int = Field(default=20, ge=1)
    min_score_for_agent_update: float | None = Field(
        default=None, description="keep the initial state unless the best mean reaches this score")


@dataclass
class BufferEntry:
    state: State
    score_sum: float = 0.0
    count: int = 0
    score_dicts: list[dict[str, float]] = field(default_factory=list)

    @property
    def mean(self) -> float:
        return self.score_sum / self.count if self.count else -math.inf

    def add(self, rollouts: list[Rollout], objective: Any) -> None:
        self.score_sum += sum(selection.rollout_value(r, objective) for r in rollouts)
        self.count += len(rollouts)
        self.score_dicts.extend(r.score_dict for r in rollouts)

    def stats(self) -> selection.Stats:
        return self.mean, mean_score_dict(self.score_dicts)


class UCBSearchAlgorithm(Trainer[UCBSearchParams]):
    Params = UCBSearchParams
    knob_aliases = {"num_steps": "num_search_iterations", "batch_size": "train_batch_size"}

    def __init__(self, context: Any, params: UCBSearchParams) -> None:
        super().__init__(context, params)
        self.buffer: list[BufferEntry] = []
        self.total = 0

    def ucb(self, entry: BufferEntry) -> float:
        if entry.count == 0:
            return math.inf
        bonus = math.sqrt(math.log(max(self.total, 1)) / entry.count)
        return entry.mean + self.params.ucb_exploration_factor * bonus

    def evaluate_sample(self, entry: BufferEntry) -> None:
        """Score ``entry`` on a fresh random sample of the validation set."""
        ctx = self.ctx
        inputs, infos = selection.sample_batch(ctx.rng, ctx.validation_dataset, self.params.evaluation_batch_size)
        rollouts = ctx.run_batch(entry.state, inputs, infos)
        entry.add(rollouts, ctx.objective)
        self.total += len(rollouts)

    def exploited(self, initial: State) -> State:
        best = selection.best(self.buffer, BufferEntry.stats, self.ctx.objective)
        threshold = self.params.min_score_for_agent_update
        if threshold is not None and best.mean < threshold:
            return initial
        return best.state

    def train(self) -> None:
        ctx, p = self.ctx, self.params
        optimizer = ctx.make_optimizer()
        initial = ctx.current_state()
        self.buffer = [BufferEntry(initial)]
        self.evaluate_sample(self.buffer[0])
        for iteration in range(1, p.num_search_iterations + 1):
            ctx.check_budget()
            parent = max(self.buffer, key=self.ucb)
            inputs, infos = selection.sample_batch(ctx.rng, ctx.problem.train_dataset, p.train_batch_size)
            rollouts = ctx.run_batch(parent.state, inputs, infos)
            proposals = ctx.propose(optimizer, rollouts, parent.state, n=1, clone=False)
            parent.add(rollouts, ctx.objective)
            self.total += len(rollouts)
            added = False
            if proposals and all(state_key(e.state) != state_key(proposals[0][0]) for e in self.buffer):
                child = BufferEntry(proposals[0][0])
                self.evaluate_sample(child)
                if len(self.buffer) >= p.max_buffer_size:
                    self.buffer.remove(min(self.buffer, key=self.ucb))
                self.buffer.append(child)
                added = True
            state = self.exploited(initial)
            ctx.apply(state)
            ctx.report_step(state, iteration=iteration, child_added=added, buffer=len(self.buffer))
        ctx.apply(self.exploited(initial))

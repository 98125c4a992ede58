"""PrioritySearch: a priority queue of candidates, each carrying its own optimizer.

Every iteration pops ``num_candidates`` explorers (the current best first), runs them on one fresh
training batch split into ``num_batches`` sub-batches, asks each explorer's optimizer copy for
``num_proposals`` proposals per sub-batch, validates the new candidates (on a validation batch,
or on the same training batch when the task has no validation split) and pushes everything back.
The exploited state, reported every step, is the best candidate in memory by mean score
(objective-aware).  Optimizer state such as OptoPrime's memory follows each candidate's lineage.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, ValidationInfo, field_validator

from trace_bench.trainers.base import Trainer
from trace_bench.trainers.evaluate import Rollout
from trace_bench.trainers.optimizers import clone_optimizer
from trace_bench.trainers.opto_search import selection
from trace_bench.trainers.opto_search.candidates import Candidate
from trace_bench.trainers.opto_search.knobs import SearchParams
from trace_bench.trainers.opto_search.memory import HeapMemory, pop_best

PS_ALIASES = {
    "ps_steps": "num_steps", "ps_batches": "num_batches", "ps_candidates": "num_candidates",
    "ps_proposals": "num_proposals", "ps_mem_update": "memory_update_frequency",
    "train_batch_size": "batch_size",
}

Group = tuple[Candidate, list[Rollout]]
"""An explorer and its rollouts on this iteration's training batch."""
Pair = tuple[Candidate, list[Rollout]]
"""An (explorer, sub-batch rollouts) pair: one backward and ``num_proposals`` proposals."""


class PrioritySearchParams(SearchParams):
    num_epochs: int = Field(default=1, ge=0)
    num_steps: int | None = Field(default=None, ge=0, description="iterations; when unset, num_epochs epochs")
    num_batches: int = Field(default=1, ge=1)
    batch_size: int = Field(default=1, ge=1)
    score_range: tuple[float, float] | None = Field(default=None, description="(min, max); None: (-inf, inf)")
    num_candidates: int = Field(default=10, ge=1)
    num_proposals: int = Field(default=1, ge=1)
    validate_exploration_candidates: bool = True
    use_best_candidate_to_explore: bool = True
    long_term_memory_size: int | None = Field(default=None, ge=1)
    short_term_memory_size: int | None = Field(default=None, ge=1)
    memory_update_frequency: int | None = Field(
        default=0, ge=0, description="0: long-term only; None: short-term only; k: merge every k")
    score_function: Literal["mean", "ucb", "time"] = "mean"
    ucb_exploration_constant: float = 1.0
    decouple_optimizers: bool = True

    @field_validator("score_range")
    @classmethod
    def _ordered_range(cls, value: tuple[float, float] | None) -> tuple[float, float] | None:
        if value is not None and not value[0] < value[1]:
            raise ValueError(f"score_range must be [min, max] with min < max, got {list(value)}")
        return value

    @field_validator("score_function")
    @classmethod
    def _ucb_needs_range(cls, value: str, info: ValidationInfo) -> str:
        score_range = info.data.get("score_range")
        if value == "ucb" and (score_range is None or not all(math.isfinite(v) for v in score_range)):
            raise ValueError("score_function 'ucb' needs a finite score_range, e.g. score_range: [0, 1]")
        return value


class PrioritySearch(Trainer[PrioritySearchParams]):
    Params = PrioritySearchParams
    knob_aliases = PS_ALIASES

    def __init__(self, context: Any, params: PrioritySearchParams) -> None:
        super().__init__(context, params)
        p = self.params
        self.long_memory = HeapMemory(p.long_term_memory_size)
        self.short_memory = HeapMemory(p.short_term_memory_size)
        self.iteration = 0
        self.initial: Candidate | None = None
        self.val_loader: Any = None

    # -- priorities and exploitation ------------------------------------------------------
    @property
    def max_score(self) -> float:
        return self.params.score_range[1] if self.params.score_range else math.inf

    def priority(self, candidate: Candidate) -> float:
        """Exploration priority; unevaluated candidates get ``max_score`` so they are tried next."""
        objective = self.ctx.objective
        if self.params.score_function == "time" and not (objective and objective.multi):
            return -float(candidate.created)
        if not candidate.scores:
            return self.max_score
        if objective is not None and objective.multi:
            return selection.stats_value(candidate.stats(), objective)
        if self.params.score_function == "ucb":
            return candidate.ucb(self.iteration + 1, self.params.ucb_exploration_constant, self.params.score_range)
        return candidate.mean if candidate.mean is not None else self.max_score

    def pool(self) -> list[Candidate]:
        """Every candidate in memory, oldest first (ties in exploitation go to the older one)."""
        return sorted([*self.long_memory, *self.short_memory], key=lambda c: c.created)

    def best(self) -> Candidate:
        pool = self.pool()
        scored = [c for c in pool if c.scores]
        if not scored:
            return self.initial if self.initial is not None else pool[0]
        return selection.best(scored, Candidate.stats, self.ctx.objective)

    # -- memory ---------------------------------------------------------------------------
    def push(self, candidates: list[Candidate]) -> None:
        frequency = self.params.memory_update_frequency
        target = self.long_memory if frequency == 0 else self.short_memory
        for candidate in candidates:
            target.push(candidate, self.priority(candidate))
        target.truncate()
        if frequency and self.iteration % frequency == 0:
            for candidate in self.short_memory.drain():
                self.long_memory.push(candidate, self.priority(candidate))
            self.long_memory.truncate()

    def explore(self) -> list[Candidate]:
        """The explorers of this iteration: the best candidate first, then the highest priorities."""
        memories = (self.long_memory, self.short_memory)
        if not any(len(m) for m in memories):
            return [self.initial] if self.initial is not None else []
        chosen: list[Candidate] = []
        if self.params.use_best_candidate_to_explore:
            best = self.best()
            for memory in memories:
                memory.remove(best)
            chosen.append(best)
        while len(chosen) < self.params.num_candidates:
            candidate = pop_best(memories, self.ctx.objective)
            if candidate is None:
                break
            chosen.append(candidate)
        return chosen

    # -- main loop ------------------------------------------------------------------------
    def planned_steps(self, dataset_size: int) -> int:
        if self.params.num_steps is not None:
            return self.params.num_steps
        per_epoch = math.ceil(dataset_size / (self.params.batch_size * self.params.num_batches))
        return self.params.num_epochs * max(1, per_epoch)

    def train(self) -> None:
        ctx, p = self.ctx, self.params
        self.initial = Candidate(ctx.current_state(), optimizer=ctx.make_optimizer())
        loader = ctx.loader(batch_size=p.batch_size * p.num_batches)
        validation = ctx.problem.validate_dataset
        if validation:
            self.val_loader = ctx.loader(validation, batch_size=p.batch_size * p.num_batches)
        steps = self.planned_steps(len(loader))
        while self.iteration < steps:
            ctx.check_budget()
            self.iteration += 1
            explorers = self.explore()
            inputs, infos = loader.next_batch()
            groups = self.sample(explorers, inputs, infos)
            new = self.filter_candidates(self.propose(self.select_pairs(self.pairs(groups)), explorers))
            self.validate(explorers, new, inputs, infos)
            self.push(explorers + new)
            best = self.best()
            ctx.apply(best.state)
            ctx.report_step(best.state, explorers=len(explorers), proposals=len(new), memory=len(self.pool()))
        ctx.apply(self.best().state)

    def sample(self, explorers: list[Candidate], inputs: list[Any], infos: list[Any]) -> list[Group]:
        """Run every explorer on the batch and add the rollouts to its statistics (once each).

        The first iteration explores ``num_candidates`` copies of the initial candidate (the
        original's iteration 0); each copy gets its own rollouts, hence its own traced graph.
        """
        groups: list[Group] = []
        for explorer in explorers:
            copies = self.params.num_candidates if explorer is self.initial and self.iteration == 1 else 1
            for _ in range(copies):
                rollouts = self.ctx.run_batch(explorer.state, inputs, infos)
                explorer.add_rollouts(rollouts)
                groups.append((explorer, rollouts))
        return groups

    def pairs(self, groups: list[Group]) -> list[Pair]:
        """(explorer, sub-batch) pairs: each sub-batch is one backward and ``num_proposals`` proposals."""
        size = self.params.batch_size
        return [(explorer, rollouts[start:start + size])
                for explorer, rollouts in groups for start in range(0, len(rollouts), size)]

    def select_pairs(self, pairs: list[Pair]) -> list[Pair]:
        """Which pairs get proposals (all of them here; StreamingPrioritySearch budgets them)."""
        return pairs

    def propose(self, pairs: list[Pair], explorers: list[Candidate]) -> list[Candidate]:
        ctx, p = self.ctx, self.params
        known = {c.key for c in [*self.pool(), *explorers]}
        new: list[Candidate] = []
        for explorer, rollouts in pairs:
            optimizer = explorer.optimizer
            if p.decouple_optimizers:
                optimizer = clone_optimizer(optimizer, ctx.parameters)
            for state, child_optimizer in ctx.propose(optimizer, rollouts, explorer.state, n=p.num_proposals,
                                                      clone=p.decouple_optimizers):
                candidate = Candidate(state, optimizer=child_optimizer, parents=(explorer.created,))
                if candidate.key not in known:
                    known.add(candidate.key)
                    new.append(candidate)
        return new

    def filter_candidates(self, candidates: list[Candidate]) -> list[Candidate]:
        """Hook for subclasses that prune proposals before validation (identity here)."""
        return candidates

    def validate(self, explorers: list[Candidate], new: list[Candidate], inputs: list[Any],
                 infos: list[Any]) -> None:
        """Score new candidates on a validation batch (explorers too, when asked), else on the
        training batch the explorers just used."""
        targets = list(new)
        if self.val_loader is not None:
            inputs, infos = self.val_loader.next_batch()
            if self.params.validate_exploration_candidates:
                targets += explorers
        for candidate in targets:
            candidate.add_rollouts(self.ctx.run_batch(candidate.state, inputs, infos))

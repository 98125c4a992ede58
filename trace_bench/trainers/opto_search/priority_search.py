"""PrioritySearch: a priority queue of candidates, explored by UCB or mean score.

Each iteration pops the ``num_candidates`` most promising candidates (the best one first), runs
them on a fresh training batch split into ``num_batches`` sub-batches, asks each candidate's own
optimizer for ``num_proposals`` proposals per sub-batch, scores the new candidates on a
validation batch (or the same training batch when the task has no validation split), and pushes
everything back.  The best candidate by mean score is the exploited state, reported every step.
"""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field

from trace_bench.trainers.base import Trainer, TrainerParams
from trace_bench.trainers.optimizers import clone_optimizer
from trace_bench.trainers.opto_search.candidates import Candidate

PS_ALIASES = {
    "ps_steps": "num_steps", "ps_batches": "num_batches", "ps_candidates": "num_candidates",
    "ps_proposals": "num_proposals", "ps_mem_update": "memory_update_frequency",
    "train_batch_size": "batch_size",
}


class PrioritySearchParams(TrainerParams):
    num_epochs: int = Field(default=1, ge=0)
    num_steps: int = Field(default=1, ge=0)
    num_batches: int = Field(default=1, ge=1)
    batch_size: int = Field(default=1, ge=1)
    num_candidates: int = Field(default=2, ge=1)
    num_proposals: int = Field(default=2, ge=1)
    memory_update_frequency: int | None = Field(default=0, ge=0)
    long_term_memory_size: int | None = Field(default=None, ge=1)
    short_term_memory_size: int | None = Field(default=None, ge=1)
    score_function: Literal["mean", "ucb", "time"] = "mean"
    ucb_exploration_constant: float = 1.0
    score_range: tuple[float, float] | None = None
    validate_exploration_candidates: bool = True
    use_best_candidate_to_explore: bool = True
    decouple_optimizers: bool = True


class PrioritySearch(Trainer):
    id = "PrioritySearch"
    family = "priority_search"
    description = "Priority queue of candidates (mean/UCB priority), proposals per sub-batch, validation-based selection."
    Params = PrioritySearchParams
    knob_aliases = PS_ALIASES

    def __init__(self, context: Any, params: TrainerParams) -> None:
        super().__init__(context, params)
        self.memory: list[Candidate] = []
        self.short_memory: list[Candidate] = []
        self.iteration = 0
        self.total_rollouts = 0

    # -- priorities -----------------------------------------------------------------------
    @property
    def p(self) -> PrioritySearchParams:
        return self.params  # type: ignore[return-value]

    def priority(self, candidate: Candidate) -> float:
        if self.p.score_function == "time":
            return -float(candidate.created)
        if not candidate.scores:
            return math.inf
        if self.p.score_function == "ucb":
            return candidate.ucb(self.iteration + 2, self.p.ucb_exploration_constant, self.p.score_range)
        return self.candidate_score(candidate)

    def candidate_score(self, candidate: Candidate) -> float:
        objective = self.ctx.objective
        if objective and objective.multi and candidate.score_dicts:
            from trace_bench.trainers.objectives import mean_score_dict, scalarize

            return scalarize(mean_score_dict(candidate.score_dicts), objective)
        return candidate.mean if candidate.mean is not None else -math.inf

    # -- memory ---------------------------------------------------------------------------
    def _known(self) -> dict[str, Candidate]:
        return {c.key: c for c in self.memory + self.short_memory}

    def push(self, candidates: list[Candidate]) -> None:
        use_short = self.p.memory_update_frequency is None or self.p.memory_update_frequency > 0
        target = self.short_memory if use_short else self.memory
        known = self._known()
        for candidate in candidates:
            existing = known.get(candidate.key)
            if existing is not None and existing is not candidate:
                existing.add(candidate.scores, candidate.score_dicts)
                continue
            if existing is None:
                target.append(candidate)
                known[candidate.key] = candidate
        frequency = self.p.memory_update_frequency
        if frequency and self.iteration % frequency == 0:
            self.memory.extend(self.short_memory)
            self.short_memory = []
        self._truncate()

    def _truncate(self) -> None:
        for memory, size in ((self.memory, self.p.long_term_memory_size), (self.short_memory, self.p.short_term_memory_size)):
            if size is not None and len(memory) > size:
                memory.sort(key=self.priority, reverse=True)
                del memory[size:]

    def pool(self) -> list[Candidate]:
        return self.memory + self.short_memory

    def best(self) -> Candidate:
        scored = [c for c in self.pool() if c.scores]
        return max(scored or self.pool(), key=lambda c: (self.candidate_score(c), -c.created))

    def explorers(self) -> list[Candidate]:
        chosen: list[Candidate] = []
        if self.p.use_best_candidate_to_explore:
            chosen.append(self.best())
        for candidate in sorted(self.pool(), key=lambda c: (self.priority(c), c.created), reverse=True):
            if len(chosen) >= self.p.num_candidates:
                break
            if all(candidate is not c for c in chosen):
                chosen.append(candidate)
        return chosen

    # -- main loop ------------------------------------------------------------------------
    def train(self) -> None:
        ctx, p = self.ctx, self.p
        initial = Candidate(ctx.current_state(), optimizer=ctx.make_optimizer())
        self.memory.append(initial)
        loader = ctx.loader(batch_size=p.batch_size * p.num_batches)
        validation = ctx.problem.validate_dataset
        val_loader = ctx.loader(validation, batch_size=p.batch_size * p.num_batches) if validation else None
        while self.iteration < p.num_steps or (p.num_steps == 0 and loader.epoch < p.num_epochs):
            ctx.check_budget()
            self.iteration += 1
            inputs, infos = loader.next_batch()
            explorers = self.explorers()
            new = self.explore(explorers, inputs, infos)
            self.validate(explorers, new, inputs, infos, val_loader)
            self.push(explorers + new)
            best = self.best()
            ctx.apply(best.state)
            ctx.report_step(best.state, proposals=len(new), explorers=len(explorers))
        ctx.apply(self.best().state)

    def explore(self, explorers: list[Candidate], inputs: list[Any], infos: list[Any]) -> list[Candidate]:
        ctx, p = self.ctx, self.p
        new: list[Candidate] = []
        size = p.batch_size
        for explorer in explorers:
            rollouts = ctx.run_batch(explorer.state, inputs, infos)
            explorer.add([r.score for r in rollouts], [r.score_dict for r in rollouts])
            self.total_rollouts += len(rollouts)
            for start in range(0, len(rollouts), size):
                optimizer = clone_optimizer(explorer.optimizer, ctx.parameters) if p.decouple_optimizers \
                    else explorer.optimizer
                proposals = ctx.propose(optimizer, rollouts[start:start + size], explorer.state,
                                        n=p.num_proposals, clone=p.decouple_optimizers)
                for state, child_optimizer in proposals:
                    new.append(Candidate(state, optimizer=child_optimizer, parents=(explorer.created,)))
        known = self._known()
        unique: dict[str, Candidate] = {}
        for candidate in new:
            if candidate.key not in known and candidate.key not in unique:
                unique[candidate.key] = candidate
        return list(unique.values())

    def validate(self, explorers: list[Candidate], new: list[Candidate], inputs: list[Any], infos: list[Any],
                 val_loader: Any) -> None:
        ctx = self.ctx
        if val_loader is not None:
            inputs, infos = val_loader.next_batch()
        targets = new + (explorers if val_loader is not None and self.p.validate_exploration_candidates else [])
        for candidate in targets:
            rollouts = ctx.run_batch(candidate.state, inputs, infos)
            candidate.add([r.score for r in rollouts], [r.score_dict for r in rollouts])

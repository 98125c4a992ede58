"""GEPA-Base, GEPA-UCB and GEPA-Beam: Pareto-based evolutionary search over full states.

A fixed Pareto subset D_P (``pareto_subset_size`` items of the validation set, else the training
set) is sampled once; every candidate keeps its per-instance score vector on D_P.  Each
iteration: count wins (the strictly best candidate on an instance gets one; ties go to the
earlier candidate), sample a parent with probability proportional to max(1, wins), mutate it
with one reflective proposal from a training minibatch, score the child on D_P and always add it.
Every ``merge_every`` iterations a uniform per-parameter crossover of two unrelated, untried
candidates is kept if its mean beats both parents'.  The buffer holds at most 16 candidates; the
variants differ only in how they evict and in their defaults.  The reported state is the best
D_P mean (objective-aware).
"""

from __future__ import annotations

import itertools
import math
import random
from dataclasses import dataclass
from typing import Any, ClassVar

from pydantic import Field

from trace_bench.trainers.base import Trainer
from trace_bench.trainers.evaluate import mean
from trace_bench.trainers.objectives import mean_score_dict
from trace_bench.trainers.opto_search import selection
from trace_bench.trainers.opto_search.knobs import SearchParams
from trace_bench.trainers.state import State, state_key

CAPACITY = 16
MERGE_ATTEMPTS = 8
TEMPERATURE = 1.0


@dataclass
class GEPACandidate:
    state: State
    scores: list[float]
    score_dicts: list[dict[str, float]]
    id: int
    parents: tuple[int, ...] = ()
    ancestors: frozenset[int] = frozenset()
    wins: int = 0

    @property
    def mean(self) -> float:
        return mean(self.scores) if self.scores else -math.inf

    def stats(self) -> selection.Stats:
        return self.mean, mean_score_dict(self.score_dicts)

    def related(self, other: GEPACandidate) -> bool:
        return self.id in other.ancestors or other.id in self.ancestors


class GEPAParams(SearchParams):
    pareto_subset_size: int = Field(default=24, ge=1)
    train_batch_size: int = Field(default=2, ge=1)
    merge_every: int = Field(default=5, ge=0, description="0 disables merging")
    rng_seed: int = Field(default=13, description="mixed with the job seed for parent and merge sampling")

    def iterations(self) -> int:
        """How many iterations the search runs (each family names the knob its own way)."""
        raise NotImplementedError


class GEPABaseParams(GEPAParams):
    num_iters: int = Field(default=100, ge=0)

    def iterations(self) -> int:
        return self.num_iters


class GEPASearchParams(GEPAParams):
    num_search_iterations: int = Field(default=120, ge=0)
    merge_every: int = Field(default=6, ge=0, description="0 disables merging")

    def iterations(self) -> int:
        return self.num_search_iterations


class GEPAUCBParams(GEPASearchParams):
    max_buffer_size: int = Field(default=CAPACITY, ge=1)
    ucb_exploration_factor: float = Field(default=0.8, description="accepted; unused, as in the original")
    rng_seed: int = 7
    log_frequency: int | None = Field(default=5, description="accepted for compatibility")


class GEPABeamParams(GEPASearchParams):
    rng_seed: int = 11


_GEPA_ALIASES = {"gepa_train_bs": "train_batch_size", "gepa_merge_every": "merge_every",
                 "gepa_pareto_subset": "pareto_subset_size", "batch_size": "train_batch_size"}
_SEARCH_ALIASES = {**_GEPA_ALIASES, "gepa_iters": "num_search_iterations",
                   "num_steps": "num_search_iterations"}


class GEPABase(Trainer[GEPAParams]):
    #: each variant names its own model of the shared knobs
    Params: ClassVar[type[GEPAParams]] = GEPABaseParams
    knob_aliases = {**_GEPA_ALIASES, "gepa_iters": "num_iters", "num_steps": "num_iters"}

    def __init__(self, context: Any, params: GEPAParams) -> None:
        super().__init__(context, params)
        self.buffer: list[GEPACandidate] = []
        self.tried: set[frozenset[int]] = set()
        self._ids = itertools.count()
        self.pareto_inputs: list[Any] = []
        self.pareto_infos: list[Any] = []
        self.rng = random.Random(0)  # reseeded from the job's generator when training starts

    @property
    def num_iterations(self) -> int:
        return self.params.iterations()

    # -- buffer ---------------------------------------------------------------------------
    def score(self, state: State, parents: tuple[GEPACandidate, ...] = ()) -> GEPACandidate:
        rollouts = self.ctx.run_batch(state, self.pareto_inputs, self.pareto_infos)
        ancestors = frozenset(itertools.chain.from_iterable(p.ancestors | {p.id} for p in parents))
        values = [selection.rollout_value(r, self.ctx.objective) for r in rollouts]
        return GEPACandidate(list(state), values, [r.score_dict for r in rollouts], next(self._ids),
                             tuple(p.id for p in parents), ancestors)

    def update_wins(self) -> None:
        for candidate in self.buffer:
            candidate.wins = 0
        for index in range(len(self.pareto_inputs)):
            winner, top = None, -math.inf
            for candidate in self.buffer:
                if candidate.scores[index] > top:
                    winner, top = candidate, candidate.scores[index]
            if winner is not None:
                winner.wins += 1

    def ranked(self) -> list[GEPACandidate]:
        return sorted(self.buffer, key=lambda c: (c.wins, c.mean), reverse=True)

    def add(self, candidate: GEPACandidate) -> None:
        self.buffer.append(candidate)
        self.update_wins()
        self.enforce_capacity()

    def enforce_capacity(self) -> None:
        """Base and Beam: sort by (wins, mean) and keep the top 16."""
        if len(self.buffer) > CAPACITY:
            self.buffer = self.ranked()[:CAPACITY]
            self.update_wins()

    def best(self) -> GEPACandidate:
        return selection.best(self.buffer, GEPACandidate.stats, self.ctx.objective)

    # -- the loop -------------------------------------------------------------------------
    def train(self) -> None:
        ctx, p = self.ctx, self.params
        self.rng = random.Random(ctx.rng.getrandbits(64) ^ p.rng_seed)
        optimizer = ctx.make_optimizer()
        self.pareto_inputs, self.pareto_infos = selection.sample_batch(ctx.rng, ctx.validation_dataset,
                                                                       p.pareto_subset_size)
        self.add(self.score(ctx.current_state()))
        for iteration in range(1, self.num_iterations + 1):
            ctx.check_budget()
            parent = self.select_parent()
            inputs, infos = selection.sample_batch(ctx.rng, ctx.problem.train_dataset, p.train_batch_size)
            rollouts = ctx.run_batch(parent.state, inputs, infos)
            proposals = ctx.propose(optimizer, rollouts, parent.state, n=1, clone=False)
            child_state = proposals[0][0] if proposals else list(parent.state)
            self.add(self.score(child_state, (parent,)))
            merged = self.merge() if p.merge_every and iteration % p.merge_every == 0 else None
            best = self.best()
            ctx.apply(best.state)
            ctx.report_step(best.state, parent=parent.id, merged=merged, buffer=len(self.buffer),
                            best_mean=best.mean)
        ctx.apply(self.best().state)

    def select_parent(self) -> GEPACandidate:
        self.update_wins()
        weights = [max(1, c.wins) ** (1.0 / TEMPERATURE) for c in self.buffer]
        return self.rng.choices(self.buffer, weights=weights, k=1)[0]

    def merge(self) -> bool | None:
        """One crossover of an unrelated, untried pair among the better-ranked half of the buffer.

        Returns whether a merge was accepted, or None when no eligible pair was found.
        """
        ranked = self.ranked()
        pool = ranked[: max(2, len(ranked) // 2)]
        if len(pool) < 2:
            return None
        for _ in range(MERGE_ATTEMPTS):
            a, b = self.rng.sample(pool, 2)
            pair = frozenset((a.id, b.id))
            if pair in self.tried or a.related(b):
                continue
            self.tried.add(pair)
            state = [va if self.rng.random() < 0.5 else vb for va, vb in zip(a.state, b.state, strict=True)]
            if state_key(state) in (state_key(a.state), state_key(b.state)):
                return False  # a copy of a parent cannot beat both parents
            child = self.score(state, (a, b))
            if child.mean > a.mean and child.mean > b.mean:
                self.add(child)
                return True
            return False
        return None


class GEPAUCB(GEPABase):
    Params = GEPAUCBParams
    knob_aliases = _SEARCH_ALIASES
    params: GEPAUCBParams

    def enforce_capacity(self) -> None:
        limit = self.params.max_buffer_size
        while len(self.buffer) > limit:
            self.buffer.remove(min(self.buffer, key=lambda c: (c.wins, c.mean)))
            self.update_wins()


class GEPABeam(GEPABase):
    Params = GEPABeamParams
    knob_aliases = _SEARCH_ALIASES

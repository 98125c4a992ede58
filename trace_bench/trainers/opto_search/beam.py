"""BeamsearchAlgorithm and BeamsearchHistoryAlgorithm: a beam of full states, widened per depth.

At every depth one validation minibatch (``validation_dataset_size`` items) is sampled and shared
by all candidates of that depth.  Each beam member gets its own training minibatch, one backward
and ``num_proposals`` proposals; members stay candidates.  The top ``beam_width`` by score on the
validation minibatch (Pareto-aware when multi-objective) form the next beam.  After the last
depth the beam is rescored on the full validation set and the best is applied.  The History
variant appends the last ``max_history_size`` selected states and their scores to the feedback
before every backward, so the optimizer sees what was already tried.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from trace_bench.trainers.base import Trainer
from trace_bench.trainers.opto_search import selection
from trace_bench.trainers.opto_search.knobs import SearchParams
from trace_bench.trainers.state import State, state_key

_VALUE_CHARS = 300


class BeamsearchParams(SearchParams):
    beam_width: int = Field(default=3, ge=1)
    num_proposals: int = Field(default=4, ge=1)
    max_depth: int = Field(default=2, ge=0, description="iterations (one per depth)")
    validation_dataset_size: int = Field(default=5, ge=1)
    batch_size: int = Field(default=1, ge=1)
    num_epochs: int = Field(default=1, ge=0, description="accepted; unused, as in the original")
    test_frequency: int | None = Field(default=4, description="accepted for compatibility")


class BeamsearchAlgorithm(Trainer[BeamsearchParams]):
    Params = BeamsearchParams
    knob_aliases = {"train_batch_size": "batch_size", "num_steps": "max_depth"}

    def __init__(self, context: Any, params: BeamsearchParams) -> None:
        super().__init__(context, params)
        self.optimizer: Any = None

    def history_context(self) -> str:
        """Text appended to the batched feedback before each backward (none here)."""
        return ""

    def remember(self, state: State, score: float) -> None:
        """Called with the selected state of each depth (the History variant keeps them)."""

    def expand(self, member: State) -> list[State]:
        ctx = self.ctx
        inputs, infos = selection.sample_batch(ctx.rng, ctx.problem.train_dataset, self.params.batch_size)
        rollouts = ctx.run_batch(member, inputs, infos)
        proposals = ctx.propose(self.optimizer, rollouts, member, n=self.params.num_proposals, clone=False,
                                feedback_suffix=self.history_context())
        return [state for state, _ in proposals]

    def train(self) -> None:
        ctx, p = self.ctx, self.params
        self.optimizer = ctx.make_optimizer()
        beam: list[State] = [ctx.current_state()]
        for depth in range(1, p.max_depth + 1):
            ctx.check_budget()
            val_inputs, val_infos = selection.sample_batch(ctx.rng, ctx.validation_dataset,
                                                           p.validation_dataset_size)
            candidates: dict[str, State] = {state_key(member): member for member in beam}
            for member in beam:
                for state in self.expand(member):
                    candidates.setdefault(state_key(state), state)
            scored: list[tuple[State, selection.Stats]] = []
            for state in candidates.values():
                score, score_dict = ctx.score_of(ctx.run_batch(state, val_inputs, val_infos))
                scored.append((state, (score, score_dict)))
            kept = selection.top_k(scored, p.beam_width, lambda item: item[1], ctx.objective)
            beam = [state for state, _ in kept]
            self.remember(beam[0], kept[0][1][0])
            ctx.apply(beam[0])
            ctx.report_step(beam[0], depth=depth, candidates=len(candidates), beam=len(beam))
        final = [(state, self.full_validation(state)) for state in beam]
        ctx.apply(selection.best(final, lambda item: item[1], ctx.objective)[0])

    def full_validation(self, state: State) -> selection.Stats:
        result = self.ctx.evaluate(state, self.ctx.validation_dataset)
        return result.score, result.score_dict


class BeamsearchHistoryParams(BeamsearchParams):
    num_proposals: int = Field(default=1, ge=1)
    test_frequency: int | None = Field(default=5, description="accepted for compatibility")
    max_history_size: int = Field(default=10, ge=1)
    min_score: float | None = Field(default=0.0, description="accepted for compatibility")


class BeamsearchHistoryAlgorithm(BeamsearchAlgorithm):
    Params = BeamsearchHistoryParams

    params: BeamsearchHistoryParams

    def __init__(self, context: Any, params: BeamsearchHistoryParams) -> None:
        super().__init__(context, params)
        self.history: list[tuple[State, float]] = []

    def remember(self, state: State, score: float) -> None:
        size = self.params.max_history_size
        self.history = [*self.history, (list(state), score)][-size:]

    def history_context(self) -> str:
        if not self.history:
            return ""
        names = [p.py_name for p in self.ctx.parameters]
        lines = ["", "", "History of previous attempts (parameters and their validation scores):"]
        for index, (state, score) in enumerate(self.history, start=1):
            values = ", ".join(f"{name}={str(value)[:_VALUE_CHARS]!r}"
                               for name, value in zip(names, state, strict=True))
            lines.append(f"Attempt {index}: score {score:.4g}; {values}")
        return "\n".join(lines)

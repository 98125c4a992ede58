"""What a trainer gets from the harness: the problem, optimizers, evaluation and reporting.

One context per job.  Trainers never touch files, clocks or the LLM configuration themselves;
they call :meth:`TrainerContext.report_step` after every iteration, and the harness turns that
into events, ``curve.csv`` and ``state_history.jsonl`` for every trainer alike.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from trace_bench.trainers import state as state_ops
from trace_bench.trainers.evaluate import Rollout, make_evaluator, summarize
from trace_bench.trainers.objectives import ObjectiveConfig
from trace_bench.trainers.optimizers import build_optimizer, canonical_optimizer
from trace_bench.trainers.state import State


@dataclass
class EvalResult:
    score: float
    scores: list[float]
    score_dict: dict[str, float]
    rollouts: list[Rollout] = field(default_factory=list)

    @property
    def feedbacks(self) -> list[str]:
        return [r.feedback for r in self.rollouts]


def given(**info: Any) -> dict[str, Any]:
    """The keyword arguments that are set (a step's optional notes, for :meth:`TrainerContext.report_step`'s
    ``**info``): ``report_step(state, **given(note=note))`` records ``note`` only when there is one."""
    return {key: value for key, value in info.items() if value}


@dataclass
class StepReport:
    """One trainer iteration as the harness records it.

    ``score_dict`` holds the per-objective means of ``state`` (``{"score": s}`` on a
    single-objective task); the harness fills ``score`` and ``score_dict`` from its own
    measurement of ``state`` on the selection split when it measures (every job does)."""

    step: int
    state: State
    score: float | None
    score_dict: dict[str, float]
    n_evals: int
    wall_s: float
    accepted: bool = True
    info: dict[str, Any] = field(default_factory=dict)


class DataLoader:
    """Seeded, epoch-based minibatches over ``{inputs, infos}``; short tails wrap into a new epoch."""

    def __init__(self, dataset: dict[str, list[Any]], batch_size: int, rng: random.Random, shuffle: bool = True):
        self.inputs = list(dataset["inputs"])
        self.infos = list(dataset["infos"])
        self.batch_size = max(1, int(batch_size))
        self.rng = rng
        self.shuffle = shuffle
        self.epoch = 0
        self._order: list[int] = []

    def __len__(self) -> int:
        return len(self.inputs)

    def _refill(self) -> None:
        order = list(range(len(self.inputs)))
        if self.shuffle:
            self.rng.shuffle(order)
        self._order.extend(order)
        self.epoch += 1

    def next_batch(self) -> tuple[list[Any], list[Any]]:
        while len(self._order) < self.batch_size:
            self._refill()
        picked, self._order = self._order[: self.batch_size], self._order[self.batch_size :]
        return [self.inputs[i] for i in picked], [self.infos[i] for i in picked]


class TrainerContext:
    """Per-job services for a trainer (see module docstring)."""

    def __init__(
        self,
        problem: Any,
        *,
        session: Any,
        seed: int,
        optimizer: str | None = None,
        optimizer_kwargs: dict[str, Any] | None = None,
        num_threads: int = 1,
        on_step: Callable[[StepReport], None] | None = None,
        selection_score: Callable[[State], tuple[float | None, dict[str, float]]] | None = None,
    ) -> None:
        self.problem = problem
        self.session = session
        self.seed = seed
        self.rng = random.Random(seed)
        self.parameters = state_ops.trainable_parameters(problem.param)
        self.optimizer_name = canonical_optimizer(optimizer)
        self.optimizer_requested = optimizer  # as the config wrote it (opto's own trainers resolve it natively)
        self.optimizer_kwargs = {**problem.optimizer_kwargs, **(optimizer_kwargs or {})}
        self.objective = ObjectiveConfig.coerce(problem.objective_config)
        self.evaluator = make_evaluator(problem, num_threads=num_threads)
        self.evaluator.budget = getattr(session, "budget", None)  # budget.evaluations binds every trainer
        self._on_step = on_step
        self._selection_score = selection_score
        self._step = 0
        self._started = time.monotonic()

    # -- states ---------------------------------------------------------------------------
    def current_state(self) -> State:
        return state_ops.snapshot(self.parameters)

    def apply(self, state: State) -> None:
        state_ops.apply_state(self.parameters, state)

    def state_from_update(self, base: State, update: dict[Any, Any]) -> State:
        return state_ops.state_from_update(self.parameters, base, update)

    # -- optimizers -----------------------------------------------------------------------
    def make_optimizer(self) -> Any:
        return build_optimizer(self.optimizer_name, self.parameters, self.session.client("optimizer"),
                               self.optimizer_kwargs)

    def propose(self, optimizer: Any, rollouts: Sequence[Rollout], base: State, n: int = 1,
                clone: bool = True, feedback_suffix: str = "") -> list[tuple[State, Any]]:
        """One backward over a minibatch, then ``n`` proposals (each from its own optimizer copy
        when ``clone``), as full states; unchanged proposals are dropped.  ``feedback_suffix`` is
        appended to the batched feedback (e.g. a history of earlier attempts)."""
        from trace_bench.trainers.evaluate import batchify
        from trace_bench.trainers.optimizers import clone_optimizer

        self.apply(base)
        output, feedback = batchify(rollouts)
        feedback += feedback_suffix
        optimizer.zero_feedback()
        optimizer.backward(output, feedback)
        base_key = state_ops.state_key(base)
        proposals: list[tuple[State, Any]] = []
        for _ in range(max(1, n)):
            worker = clone_optimizer(optimizer, self.parameters) if clone else optimizer
            update = worker.propose()
            if not update:
                continue
            state = self.state_from_update(base, update)
            if state_ops.state_key(state) != base_key:
                proposals.append((state, worker))
        optimizer.zero_feedback()
        return proposals

    # -- evaluation -----------------------------------------------------------------------
    def score_of(self, rollouts: Sequence[Rollout]) -> tuple[float, dict[str, float]]:
        summary = summarize(rollouts, self.objective)
        return summary.score, summary.score_dict

    def run_batch(self, state: State, inputs: Sequence[Any], infos: Sequence[Any]) -> list[Rollout]:
        """Rollouts of ``state`` on a batch; the live parameters hold ``state`` afterwards."""
        self.apply(state)
        return self.evaluator.rollouts(inputs, infos)

    def evaluate(self, state: State, dataset: dict[str, list[Any]], limit: int | None = None) -> EvalResult:
        inputs, infos = dataset["inputs"], dataset["infos"]
        if limit is not None:
            inputs, infos = inputs[:limit], infos[:limit]
        rollouts = self.run_batch(state, inputs, infos)
        score, score_dict = self.score_of(rollouts)
        return EvalResult(score, [r.score for r in rollouts], score_dict, rollouts)

    def loader(self, dataset: dict[str, list[Any]] | None = None, batch_size: int = 1) -> DataLoader:
        return DataLoader(dataset or self.problem.train_dataset, batch_size, random.Random(self.rng.random()))

    @property
    def n_evals(self) -> int:
        return self.evaluator.n_evals

    @property
    def validation_dataset(self) -> dict[str, list[Any]]:
        return self.problem.validate_dataset or self.problem.train_dataset

    # -- reporting ------------------------------------------------------------------------
    def report_step(self, state: State, score: float | None = None, score_dict: dict[str, float] | None = None,
                    *, accepted: bool = True, **info: Any) -> StepReport:
        """Record one iteration; the harness scores ``state`` on the selection split when asked."""
        self._step += 1
        if self._selection_score is not None:
            score, score_dict = self._selection_score(state)
        elif not score_dict and score is not None:
            score_dict = {"score": float(score)}
        report = StepReport(
            step=self._step, state=list(state), score=score, score_dict=dict(score_dict or {}),
            n_evals=self.n_evals, wall_s=time.monotonic() - self._started, accepted=accepted, info=info,
        )
        if self._on_step is not None:
            self._on_step(report)
        return report

    @property
    def steps_reported(self) -> int:
        return self._step

    def check_budget(self) -> None:
        """Raise ``BudgetExhausted`` when the wall-time or the evaluations budget is spent (LLM budgets
        raise on call, evaluations before each one too)."""
        self.session.budget.check_wall()
        self.session.budget.check_evaluations(self.n_evals)

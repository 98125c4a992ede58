"""OptunaSearch: optuna's samplers over the task's numeric space (no LLM).

``sampler: tpe`` (default; Bergstra et al.'s tree-structured Parzen estimator), ``cmaes`` (CMA-ES, the
``cmaes`` package, started at the centre of the space: the initial state, for the default space), or
``random``; each seeded by the job's seed.  The
space is the task's declared ``search_space`` or the initial state's numbers (:mod:`.space`); every
trial is one candidate, scored like any proposal and told to the study (maximized).  Needs the
``baselines`` extra (optuna, cmaes).
"""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field

from trace_bench.trainers.base import Trainer
from trace_bench.trainers.baselines.loop import (
    BaselineParams,
    Best,
    candidate_limit,
    task_space,
    try_candidate,
)
from trace_bench.trainers.baselines.space import Dimension, apply_values


class OptunaParams(BaselineParams):
    sampler: Literal["tpe", "cmaes", "random"] = Field(default="tpe", description="optuna's sampler")
    scale: float = Field(default=10.0, gt=0, description="each number's range: initial ± scale × max(|initial|, 1)")


def make_sampler(name: str, seed: int) -> Any:
    import optuna

    if name == "cmaes":
        return optuna.samplers.CmaEsSampler(seed=seed, warn_independent_sampling=False)
    if name == "random":
        return optuna.samplers.RandomSampler(seed=seed)
    return optuna.samplers.TPESampler(seed=seed)


def suggest(trial: Any, dimension: Dimension) -> float:
    if dimension.integer:
        return float(trial.suggest_int(dimension.name, int(dimension.low), int(dimension.high), log=dimension.log))
    return float(trial.suggest_float(dimension.name, dimension.low, dimension.high, log=dimension.log))


class OptunaSearch(Trainer[OptunaParams]):
    Params = OptunaParams
    uses_optimizer = False

    def train(self) -> None:
        import optuna

        optuna.logging.set_verbosity(optuna.logging.WARNING)
        dimensions = task_space(self.ctx, self.params.scale)
        study = optuna.create_study(direction="maximize",
                                    sampler=make_sampler(self.params.sampler, self.ctx.seed))
        initial = self.ctx.current_state()
        limit = candidate_limit(self.ctx, self.params.samples)
        best, tried = Best(), 0
        while limit is None or tried < limit:
            self.ctx.check_budget()
            trial = study.ask()
            values = [suggest(trial, d) for d in dimensions]
            score = try_candidate(self.ctx, apply_values(initial, dimensions, values), best, trial=trial.number)
            study.tell(trial, score)
            tried += 1

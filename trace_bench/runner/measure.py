"""The harness's own measurements: selection score (validation, else train) and test score.

Measurements use a separate evaluator (they are not the trainer's evaluations), are cached per
state, restore the live parameters afterwards, and run with the LLM budget suspended (they are
metered, and reported as the 'measure' phase).
"""

from __future__ import annotations

from typing import Any

from trace_bench.trainers import state as state_ops
from trace_bench.trainers.evaluate import Evaluator, mean
from trace_bench.trainers.objectives import ObjectiveConfig, mean_score_dict, scalarize


class Measurer:
    def __init__(self, problem: Any, parameters: list[Any], session: Any) -> None:
        self.problem = problem
        self.parameters = parameters
        self.session = session
        self.objective = ObjectiveConfig.coerce(problem.objective_config)
        self.evaluator = Evaluator(problem.param, problem.guide,
                                   error_score=float(problem.metadata.get("failure_score", 0.0)),
                                   want_score_dict=bool(self.objective and self.objective.multi))
        self._cache: dict[str, tuple[float | None, dict[str, float]]] = {}

    def _score(self, state: list[Any], dataset: dict[str, list[Any]]) -> tuple[float | None, dict[str, float]]:
        live = state_ops.snapshot(self.parameters)
        try:
            state_ops.apply_state(self.parameters, state)
            with self.session.measuring():
                rollouts = self.evaluator.rollouts(dataset["inputs"], dataset["infos"])
        finally:
            state_ops.apply_state(self.parameters, live)
        score_dict = mean_score_dict(r.score_dict for r in rollouts)
        if self.objective and self.objective.multi:
            return scalarize(score_dict, self.objective), score_dict
        return mean([r.score for r in rollouts]), score_dict

    def selection(self, state: list[Any]) -> tuple[float | None, dict[str, float]]:
        key = state_ops.state_key(state)
        if key not in self._cache:
            self._cache[key] = self._score(state, self.problem.selection_dataset)
        return self._cache[key]

    def test(self, state: list[Any]) -> float | None:
        return self._score(state, self.problem.test_dataset)[0]

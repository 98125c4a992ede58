"""The harness's own measurements: selection score (validation, else train) and test score.

Measurements use a separate evaluator (they are not the trainer's evaluations), are cached per
state, restore the live parameters afterwards, and run with the LLM budget suspended (they are
metered, and reported as the 'measure' phase).
"""

from __future__ import annotations

from typing import Any

from trace_bench.trainers import state as state_ops
from trace_bench.trainers.evaluate import Summary, make_evaluator, summarize
from trace_bench.trainers.objectives import ObjectiveConfig


class Measurer:
    def __init__(self, problem: Any, parameters: list[Any], session: Any) -> None:
        self.problem = problem
        self.parameters = parameters
        self.session = session
        self.objective = ObjectiveConfig.coerce(problem.objective_config)
        self.evaluator = make_evaluator(problem)
        self._cache: dict[str, Summary] = {}
        self._test_cache: dict[str, float | None] = {}

    def _score(self, state: list[Any], dataset: dict[str, list[Any]]) -> Summary:
        live = state_ops.snapshot(self.parameters)
        try:
            state_ops.apply_state(self.parameters, state)
            with self.session.measuring():
                rollouts = self.evaluator.rollouts(dataset["inputs"], dataset["infos"])
        finally:
            state_ops.apply_state(self.parameters, live)
        return summarize(rollouts, self.objective)

    def _selection(self, state: list[Any]) -> Summary:
        key = state_ops.state_key(state)
        if key not in self._cache:
            self._cache[key] = self._score(state, self.problem.selection_dataset)
        return self._cache[key]

    def selection(self, state: list[Any]) -> tuple[float | None, dict[str, float]]:
        summary = self._selection(state)
        return summary.score, summary.score_dict

    def failed(self, state: list[Any]) -> bool:
        """Whether ``state`` failed (raised, or gave an unscorable output) on a selection example."""
        return self._selection(state).failed

    def test(self, state: list[Any]) -> float | None:
        """Held-out score of ``state``, measured once per distinct state (the last iterate is
        often the best state)."""
        key = state_ops.state_key(state)
        if key not in self._test_cache:
            self._test_cache[key] = self._score(state, self.problem.test_dataset).score
        return self._test_cache[key]

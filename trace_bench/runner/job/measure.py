"""The harness's own measurements: selection score (validation, else train) and test score.

Measurements use a separate evaluator (they are not the trainer's evaluations), are cached per
state and restore the live parameters afterwards.  Scoring a state on the selection split picks the
best state, so it is charged to the job's budget (``charged``, the default: the session's
``selecting``, results.json ``selection_*``) and may be refused by it (``BudgetExhausted``); the
test split's scoring, and an uncharged selection scoring (the parameters a stopped trainer left,
never credited), are metered as the ``measure`` phase, outside the budget.
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

    def _score(self, state: list[Any], dataset: dict[str, list[Any]], charged: bool = False) -> Summary:
        live = state_ops.snapshot(self.parameters)
        try:
            state_ops.apply_state(self.parameters, state)
            with self.session.selecting() if charged else self.session.measuring():
                rollouts = self.evaluator.rollouts(dataset["inputs"], dataset["infos"])
        finally:
            state_ops.apply_state(self.parameters, live)
        return summarize(rollouts, self.objective)

    def _selection(self, state: list[Any], charged: bool = True) -> Summary:
        key = state_ops.state_key(state)
        if key not in self._cache:
            self._cache[key] = self._score(state, self.problem.selection_dataset, charged)
        return self._cache[key]

    def selection(self, state: list[Any], charged: bool = True) -> tuple[float | None, dict[str, float]]:
        """The state's score on the selection split (charged to the budget unless ``charged`` is false)."""
        summary = self._selection(state, charged)
        return summary.score, summary.score_dict

    def failed(self, state: list[Any]) -> bool:
        """Whether ``state`` failed (raised, or gave an unscorable output) on a selection example."""
        return self._selection(state, charged=False).failed

    def test(self, state: list[Any]) -> float | None:
        """Held-out score of ``state``, measured once per distinct state (the last iterate is
        often the best state)."""
        key = state_ops.state_key(state)
        if key not in self._test_cache:
            self._test_cache[key] = self._score(state, self.problem.test_dataset).score
        return self._test_cache[key]

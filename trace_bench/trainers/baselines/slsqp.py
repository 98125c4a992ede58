"""SLSQPMultistart: scipy's SLSQP from random starts on a discovery problem's continuous form (no LLM).

A built-in problem declares its continuous form (``trace_bench.tasks.discovery.problems.continuous``:
an objective, constraints, bounds, random starts, and how a solution becomes the construction); a
task without one cannot be given to this trainer (list-tasks shows ``continuous`` among the task's
parameter kinds; the config check refuses the pair).  Each start is one local solve in the job
process (the form is the task's own code, never a candidate's), whose construction is written as an
evolve block that returns those numbers and scored like any candidate: in the sandbox, by the
trusted scorer, one of ``budget.evaluations``.  The wall budget is checked at every iteration.
"""

from __future__ import annotations

from typing import Any

import numpy as np
from pydantic import Field

from trace_bench.trainers.base import Trainer, TrainerParams
from trace_bench.trainers.baselines.loop import Best, candidate_limit, try_candidate


class SLSQPParams(TrainerParams):
    starts: int | None = Field(default=None, ge=1, description="random starts (each one evaluation); unset: until "
                               "the job's evaluations or wall_s budget is spent, else 20")
    maxiter: int = Field(default=100, ge=1, description="SLSQP iterations per start")
    steps: int = Field(default=50, ge=2, le=2000, description="length of the step functions of the "
                       "autocorrelation and overlap problems")


def continuous_form(problem: Any, steps: int) -> Any:
    """The task's continuous form, or ValueError saying why it has none."""
    factory = problem.extras.get("continuous_form")
    form = factory(steps) if callable(factory) else None
    if form is None:
        reason = problem.metadata.get("continuous_form") or "it declares no continuous form"
        raise ValueError(f"{problem.task_id}: SLSQPMultistart needs a task's continuous form; {reason}")
    return form


class SLSQPMultistart(Trainer[SLSQPParams]):
    Params = SLSQPParams
    uses_optimizer = False
    optimizes_only = ("continuous",)

    def solve(self, form: Any, start: np.ndarray) -> np.ndarray:
        from scipy.optimize import minimize

        constraints: list[dict[str, Any]] = []
        if form.inequalities is not None:
            constraints.append({"type": "ineq", "fun": form.inequalities,
                                **({"jac": form.inequalities_jacobian} if form.inequalities_jacobian else {})})
        if form.equalities is not None:
            constraints.append({"type": "eq", "fun": form.equalities})
        result = minimize(form.objective, start, jac=form.gradient, method="SLSQP", constraints=constraints,
                          bounds=form.bounds or None, callback=lambda _: self.ctx.check_budget(),
                          options={"maxiter": self.params.maxiter, "ftol": 1e-12})
        return np.asarray(result.x, dtype=float)

    def train(self) -> None:
        form = continuous_form(self.ctx.problem, self.params.steps)
        initial = self.ctx.current_state()
        if len(initial) != 1 or not isinstance(initial[0], str):
            raise ValueError(f"{self.ctx.problem.task_id}: SLSQPMultistart evolves one program (a discovery task's "
                             "evolve block)")
        rng = np.random.default_rng(self.ctx.seed)
        limit = candidate_limit(self.ctx, self.params.starts)
        best, tried = Best(), 0
        while limit is None or tried < limit:
            self.ctx.check_budget()
            x = self.solve(form, form.start(rng))
            note = f"SLSQP from random start {tried + 1} (seed {self.ctx.seed}): the construction it found."
            try_candidate(self.ctx, [form.block(form.construction(x), note)], best, start=tried + 1)
            tried += 1

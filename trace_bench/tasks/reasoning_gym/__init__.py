"""reasoning_gym:* tasks: prompt optimization on procedurally generated reasoning problems.

The ``reasoning-gym`` package generates every item from a seed and ships an exact verifier per
dataset, so these tasks need no network, give the same items on every machine, and are scored by
the package itself (``dataset.score_answer``).  Listing is static: the package is not imported
until a job builds a problem.
"""

from __future__ import annotations

from typing import Any

from trace_bench.tasks.reasoning_gym.catalog import TASKS, GymTask
from trace_bench.tasks.spec import TaskSpec, requires

__all__ = ["SUITE", "TASKS", "GymTask", "build", "discover"]

SUITE = "reasoning_gym"
_MODULE = "trace_bench.tasks.reasoning_gym.problem"


def discover() -> list[TaskSpec]:
    return [
        TaskSpec(
            id=f"{SUITE}:{task.name}", suite=SUITE, description=task.description, module=_MODULE,
            parameter_kinds=("text",), scoring="reasoning-gym's exact verifier (score_answer), 0..1",
            needs=("reasoning_gym",), availability=requires("reasoning_gym", extra="reasoning"),
            tags=("prompt", "reasoning"),
        )
        for task in TASKS.values()
    ]


def build(spec: TaskSpec, eval_kwargs: dict[str, Any]) -> dict[str, Any]:
    from trace_bench.tasks.reasoning_gym.problem import build_trace_problem

    kwargs = {key: value for key, value in eval_kwargs.items() if key != "task_id"}
    return build_trace_problem(task_id=spec.id, **kwargs)

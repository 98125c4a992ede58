"""reasoning_gym:* tasks: prompt optimization on procedurally generated reasoning problems.

The ``reasoning-gym`` package generates every item from a seed and ships an exact verifier per
dataset, so these tasks need no network, give the same items on every machine, and are scored by
the package itself (``dataset.score_answer``).  Listing is static: the package is not imported
until a job builds a problem.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trace_bench.registry.specs import TaskSpec, requires

SUITE = "reasoning_gym"
_MODULE = "trace_bench.tasks.reasoning_gym.problem"


@dataclass(frozen=True)
class GymTask:
    """One reasoning-gym dataset as a task; ``config`` holds our defaults for its generator.

    ``multiline`` marks answers that span lines (ARC grids): the guide then keeps every line after
    the ``Answer:`` marker instead of the first.
    """

    name: str
    description: str
    config: dict[str, Any] = field(default_factory=dict)
    multiline: bool = False


TASKS: dict[str, GymTask] = {
    task.name: task
    for task in (
        GymTask("gsm_symbolic", "GSM-Symbolic: templated grade-school math with fresh numbers"),
        GymTask("word_sorting", "Sort a list of words by ASCII/Unicode order, ascending or descending"),
        GymTask("knights_knaves", "Knights and knaves: decide who tells the truth from their statements"),
        # 3 people x 3 attributes keeps generation near 40 ms an item (the 4 x 4 default is ~150 ms).
        GymTask("zebra_puzzles", "Zebra (Einstein) logic grid puzzles, small grids",
                config={"num_people": 3, "num_characteristics": 3}),
        GymTask("arc_1d", "One-dimensional ARC: infer a row transformation from examples"),
        GymTask("arc_agi", "ARC-AGI-1 grid puzzles (the package's shipped tasks)", multiline=True),
    )
}


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

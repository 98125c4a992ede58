"""The reasoning-gym datasets offered as tasks, with our defaults for their generators."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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

"""internal:numeric_param: move one trainable float to a target (3.0)."""

from __future__ import annotations

import math
from typing import Any

from opto import trace

from trace_bench.tasks.guide import Guide, OutputRejected

TARGET = 3.0


class DistanceGuide(Guide):
    """Minus the distance of a numeric output to the target; an output that is not a finite number
    is rejected (it scores the task's failure score)."""

    def get_feedback(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> tuple[float, str]:
        try:
            value = float(response)
        except (TypeError, ValueError):
            raise OutputRejected(f"the output {response!r} is not a number") from None
        if not math.isfinite(value):
            raise OutputRejected(f"the output {value} is not a finite number")
        score = -abs(value - float(reference))
        if score == 0:
            return score, "Correct: the output equals the target."
        direction = "increase" if value < float(reference) else "decrease"
        return score, f"The output {value:g} is off by {abs(value - float(reference)):g}; {direction} it."


@trace.model
class NumericAgent:
    def __init__(self) -> None:
        self.x = trace.node(0.0, name="x", trainable=True, description="A number the agent outputs.")

    def forward(self, query: Any) -> Any:
        return self.identity(self.x)

    @trace.bundle(trainable=True)
    def identity(self, value: float) -> float:
        """Return the value unchanged."""
        return value


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    target = float(eval_kwargs.get("target", TARGET))
    return {
        "param": NumericAgent(),
        "guide": DistanceGuide(),
        "train_dataset": {"inputs": ["Output the target number."], "infos": [target]},
        "optimizer_kwargs": {"objective": f"Make the output equal {target:g}.", "memory_size": 5},
        "metadata": {"benchmark": "internal", "optimizes": "a float parameter", "scoring": "-|output - target|"},
        "score_range": [None, 0.0],
        # plausible guesses, none of them the target: the stub reaches it only by following the feedback
        "stub_candidates": [{"x": target - 1.5}, {"x": target + 1.1}, {"x": target - 0.6}],
    }

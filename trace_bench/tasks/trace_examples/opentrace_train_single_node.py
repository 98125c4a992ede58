"""trace_examples:opentrace_train_single_node: OpenTrace's single-node example.

One trainable integer, emitted through a trainable identity block, must reach the number hidden in
the example's info ("Correct answer is: 3").  Score: minus the distance to that number.
"""

from __future__ import annotations

import math
from typing import Any

from opto import trace

from trace_bench.tasks.guide import Guide, OutputRejected


def target_of(reference: Any) -> str:
    """The number after the last ':' of an info such as "Correct answer is: 3"."""
    text = str(reference)
    return text.rsplit(":", 1)[1].strip() if ":" in text else text.strip()


class HiddenNumberGuide(Guide):
    def get_feedback(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> tuple[float, str]:
        target = float(target_of(reference))  # the task's own info: a bad one is a task error
        try:
            value = float(getattr(response, "data", response))
        except (TypeError, ValueError):
            raise OutputRejected(f"the output {response!r} is not a number") from None
        if not math.isfinite(value):
            raise OutputRejected(f"the output {value} is not a finite number")
        score = -abs(value - target)
        shown = target_of(reference)
        if score == 0:
            return score, f"target={shown}"  # OpenTrace's own feedback
        direction = "increase" if value < target else "decrease"
        return score, f"target={shown}; the output {value:g} is off by {abs(value - target):g}; {direction} it."


@trace.model
class OpenTraceSingleNodeAgent:
    def __init__(self) -> None:
        self.value = trace.node(0, trainable=True, name="value", description="An integer to guess")

    def forward(self, _input: Any) -> Any:
        return self.emit(self.value)

    @trace.bundle(trainable=True)
    def emit(self, value: int) -> int:
        """Return the value unchanged."""
        return value


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    info = str(eval_kwargs.get("info", "Correct answer is: 3"))
    return {
        "param": OpenTraceSingleNodeAgent(),
        "guide": HiddenNumberGuide(),
        "train_dataset": {"inputs": [None], "infos": [info]},
        "optimizer_kwargs": {"objective": "Guess the scalar value hidden in the training info.", "memory_size": 5},
        "metadata": {"benchmark": "trace_examples", "entry": "OpenTraceSingleNodeAgent",
                     "optimizes": "an integer", "scoring": "-|value - target|"},
        # plausible first guesses, never the hidden number: the stub approaches it from the feedback
        "stub_candidates": [{"value": 1}, {"value": 2}],
    }

"""trace_examples:opentrace_train_single_node: OpenTrace's single-node example.

One trainable integer, emitted through a trainable identity block, must reach the number hidden in
the example's info ("Correct answer is: 3").  Score: minus the distance to that number.
"""

from __future__ import annotations

from typing import Any

from opto import trace

from trace_bench.tasks.guide import Guide


def target_of(reference: Any) -> str:
    """The number after the last ':' of an info such as "Correct answer is: 3"."""
    text = str(reference)
    return text.rsplit(":", 1)[1].strip() if ":" in text else text.strip()


class HiddenNumberGuide(Guide):
    def get_feedback(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> tuple[float, str]:
        target = target_of(reference)
        try:
            score = -abs(float(getattr(response, "data", response)) - float(target))
        except (TypeError, ValueError):
            return -1.0, f"The output is not a number; target={target}"
        return score, f"target={target}"


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
        "stub_candidates": [{"value": 1}, {"value": 2}, {"value": int(float(target_of(info)))}],
    }

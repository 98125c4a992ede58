"""internal:multi_param: two trainable floats whose sum must reach a target (3.0)."""

from __future__ import annotations

from typing import Any

from opto import trace

from trace_bench.tasks.internal.numeric_param import DistanceGuide


@trace.model
class SumAgent:
    def __init__(self) -> None:
        self.a = trace.node(1.0, name="a", trainable=True, description="First addend.")
        self.b = trace.node(1.0, name="b", trainable=True, description="Second addend.")

    def forward(self, query: Any) -> Any:
        return self.add(self.a, self.b)

    @trace.bundle()
    def add(self, a: float, b: float) -> float:
        """Sum of the two parameters."""
        return a + b


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    target = float(eval_kwargs.get("target", 3.0))
    return {
        "param": SumAgent(),
        "guide": DistanceGuide(),
        "train_dataset": {"inputs": ["Output a + b."], "infos": [target]},
        "optimizer_kwargs": {"objective": f"Make a + b equal {target:g}.", "memory_size": 5},
        "metadata": {"benchmark": "internal", "optimizes": "two float parameters", "scoring": "-|a + b - target|"},
        "score_range": [None, 0.0],
        # no combination of these values and the initial 1.0s, each on either parameter (a library's prompt
        # may not name the parameter), sums to the target
        "stub_candidates": [{"a": 1.6}, {"b": 0.6}, {"a": 0.4}],
    }

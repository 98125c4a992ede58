"""internal:non_trainable: a problem without trainable parameters; jobs end failed with
``no_trainable_parameters`` (a check that the harness refuses to 'optimize' nothing)."""

from __future__ import annotations

from typing import Any

from opto import trace

from trace_bench.tasks.internal.numeric_param import DistanceGuide


@trace.model
class FixedAgent:
    def __init__(self) -> None:
        self.x = trace.node(1.0, name="x", trainable=False)

    def forward(self, query: Any) -> Any:
        return self.x


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    return {
        "param": FixedAgent(),
        "guide": DistanceGuide(),
        "train_dataset": {"inputs": ["Output the target."], "infos": [3.0]},
        "optimizer_kwargs": {},
        "metadata": {"benchmark": "internal", "optimizes": "nothing (expected failure)"},
    }

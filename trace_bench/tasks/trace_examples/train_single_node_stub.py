"""trace_examples:train_single_node_stub: a single trainable number guessed towards 3."""

from __future__ import annotations

from typing import Any

from opto import trace

from trace_bench.tasks.internal.numeric_param import DistanceGuide


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    target = float(eval_kwargs.get("target", 3))
    return {
        "param": trace.node(0, name="guess", trainable=True, description="An integer guess."),
        "guide": DistanceGuide(),
        "train_dataset": {"inputs": ["Guess the number."], "infos": [target]},
        "optimizer_kwargs": {"objective": "Guess the correct number.", "memory_size": 5},
        "metadata": {"benchmark": "trace_examples", "optimizes": "an integer", "scoring": "-|guess - target|"},
        "score_range": [None, 0.0],
        "stub_candidates": [1, int(target) + 2],
    }

"""The best selection score any state of each toy task can have: what no stub run may reach."""

from __future__ import annotations

KNOWN_OPTIMUM = {
    "internal:numeric_param": 0.0,
    "internal:multi_param": 0.0,
    "internal:code_param": 1.0,
    "internal:multiobjective_convex": 0.98069,  # -(f + 0.1 |x|^2) at about (0.086, -0.704)
    "trace_examples:train_single_node_stub": 0.0,
    "trace_examples:greeting_stub": 1.0,
    "trace_examples:opentrace_train_single_node": 0.0,
}

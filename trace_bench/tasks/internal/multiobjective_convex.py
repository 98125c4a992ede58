"""internal:multiobjective_convex: pick a point on the Six-Hump-Camel landscape.

Two objectives, both minimized: the camel function value (``base_loss``) and an L2 penalty
(``reg_loss``).  Every evaluation is a pure function of the proposed point, so scores are
deterministic (the original stepped a shared environment inside ``get_feedback``).
"""

from __future__ import annotations

import re
from typing import Any

from opto import trace

from trace_bench.tasks.guide import Guide
from trace_bench.tasks.objectives import ObjectiveConfig

INVALID = 1e6
_POINT = re.compile(r"\[\s*(-?\d+(?:\.\d+)?(?:e-?\d+)?)\s*,\s*(-?\d+(?:\.\d+)?(?:e-?\d+)?)\s*\]")


def six_hump_camel(x1: float, x2: float) -> float:
    return (4 - 2.1 * x1**2 + x1**4 / 3) * x1**2 + x1 * x2 + (-4 + 4 * x2**2) * x2**2


def parse_point(text: str) -> tuple[float, float] | None:
    match = _POINT.search(str(text))
    if not match:
        return None
    x1, x2 = float(match.group(1)), float(match.group(2))
    if not (-2 <= x1 <= 2 and -2 <= x2 <= 2):
        return None
    return x1, x2


class CamelGuide(Guide):
    def __init__(self, reg: float = 0.1) -> None:
        self.reg = reg

    def get_score_dict(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> dict[str, float]:
        point = parse_point(response)
        if point is None:
            return {"base_loss": INVALID, "reg_loss": INVALID}
        x1, x2 = point
        return {"base_loss": six_hump_camel(x1, x2), "reg_loss": self.reg * (x1**2 + x2**2)}

    def get_feedback(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> tuple[float, str]:
        losses = self.get_score_dict(query, response, reference)
        if losses["base_loss"] >= INVALID:
            return -INVALID, "Invalid point: answer as [x1, x2] with both coordinates in [-2, 2]."
        score = -(losses["base_loss"] + losses["reg_loss"])
        return score, (f"f(x)={losses['base_loss']:.4f}, penalty={losses['reg_loss']:.4f}; "
                       "lower is better for both. The global minimum of f is about -1.0316.")


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    mode = eval_kwargs.get("objective_mode", "weighted")
    reg = float(eval_kwargs.get("reg", 0.1))
    point = trace.node("[1.5, 1.0]", name="point", trainable=True,
                       description="A point [x1, x2] with x1, x2 in [-2, 2].")
    return {
        "param": point,
        "guide": CamelGuide(reg),
        "train_dataset": {"inputs": ["Propose a point minimizing both losses."], "infos": [None]},
        "optimizer_kwargs": {"objective": "Minimize the Six-Hump-Camel value and the L2 penalty.", "memory_size": 5},
        "objective_config": ObjectiveConfig(mode=mode, weights={"base_loss": 1.0, "reg_loss": 1.0},
                                            minimize=frozenset({"base_loss", "reg_loss"})),
        "metadata": {"benchmark": "internal", "optimizes": "a point (text)", "scoring": "-(f(x) + reg*|x|^2)",
                     "objectives": ["base_loss", "reg_loss"], "objective_mode": mode, "failure_score": -INVALID},
        # f <= 55.8 on the box and f >= -1.0317, so the weighted score lies in this range for any reg >= 0
        "score_range": [-(55.8 + 8 * reg), 1.0317],
        # points a model might try first; the minimum of f (about (0.09, -0.71)) is left to the search
        "stub_candidates": ["[0.5, -0.5]", "[-0.3, 0.9]", "[1.0, -0.5]", "[0.0, 0.0]"],
    }

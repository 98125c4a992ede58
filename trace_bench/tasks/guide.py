"""The Guide protocol: how a task scores a response and explains the score.

A guide turns ``(query, response, reference)`` into ``(score, feedback)``.  Optimizers learn
from the feedback text; trainers select candidates by the score.  Multi-objective tasks also
override :meth:`Guide.get_score_dict`.  Task modules written for the original Trace-Bench
import this class as ``opto.trainer.guide.Guide``; :mod:`trace_bench.compat` makes that name
resolve here when the installed ``opto`` lacks a trainer package.
"""

from __future__ import annotations

import copy
from typing import Any


class Guide:
    """Base class of every task's scoring rule."""

    def get_feedback(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> tuple[float, str]:
        raise NotImplementedError(f"{type(self).__name__} must implement get_feedback()")

    def __call__(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> tuple[float, str]:
        return self.forward(query, response, reference, **kwargs)

    def forward(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> tuple[float, str]:
        return self.get_feedback(query, response, reference, **kwargs)

    def metric(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> float:
        score, _ = self.get_feedback(query, response, reference, **kwargs)
        return score  # type: ignore[return-value]

    def get_score_dict(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> dict[str, float]:
        """Per-objective scores; single-objective guides return ``{"score": score}``."""
        score, _ = self.get_feedback(query, response, reference, **kwargs)
        if isinstance(score, dict):
            return {str(k): float(v) for k, v in score.items()}
        return {"score": float(score)}

    def copy(self) -> Guide:
        return copy.deepcopy(self)


def call_guide(guide: Any, query: Any, response: Any, reference: Any) -> tuple[Any, str]:
    """Score with any guide-like object: a :class:`Guide`, an opto guide or a plain callable."""
    if hasattr(guide, "get_feedback"):
        result = guide.get_feedback(query, response, reference)
    else:
        result = guide(query, response, reference)
    if isinstance(result, tuple) and len(result) >= 2:
        return result[0], str(result[1])
    return result, ""

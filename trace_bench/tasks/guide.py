"""The Guide protocol: how a task scores a response and explains the score.

A guide turns ``(query, response, reference)`` into ``(score, feedback)``.  Optimizers learn
from the feedback text; trainers select candidates by the score.  Multi-objective tasks also
override :meth:`Guide.get_score_dict`.  Task modules written for the original Trace-Bench
import this class as ``opto.trainer.guide.Guide``; :mod:`trace_bench.runner.job.opto_names` makes that name
resolve here when the installed ``opto`` lacks a trainer package.

A guide that raises, or returns a score that is not a finite number, is a broken task, not a bad
candidate: the job ends with status ``task_error`` (:class:`TaskError`) and is never scored.  A
guide says that a candidate's output is unusable (not a number, not parseable) by raising
:class:`OutputRejected`: that rollout scores the task's failure score with the message as
feedback.  A task whose guide raises on bad outputs by design (the original Trace-Bench's, say)
opts in with ``score_guide_errors: true`` in its problem: then every exception and non-finite
score of its guide is scored as a failure, and the run counts them (``guide_errors_scored``).
"""

from __future__ import annotations

import copy
import threading
from dataclasses import dataclass, field
from typing import Any

from trace_bench._util.errors import TraceBenchError


class OutputRejected(TraceBenchError):  # noqa: N818 - a verdict on the output, not an error of the guide
    """Raised by a guide for an output it cannot score (not a number, not parseable, out of range):
    the rollout gets the task's failure score and this message as the feedback optimizers read."""


class TaskError(TraceBenchError):
    """A task's guide or evaluator failed (it raised, or returned a non-finite score): the job ends
    with status ``task_error``, this message as its error and ``traceback_text`` (the guide's own
    traceback) as its traceback.  Never a score."""

    job_status = "task_error"

    def __init__(self, message: str, traceback_text: str = "") -> None:
        super().__init__(message)
        self.traceback_text = traceback_text


@dataclass
class GuideFailures:
    """What the guide of one job's problem did wrong, shared by the trainer's evaluator and the
    harness's: the first :class:`TaskError` (kept even when a trainer or a library swallows the
    exception, so the job still ends ``task_error``), and, for a task that opted in with
    ``score_guide_errors``, how many guide failures were scored as failures."""

    first: TaskError | None = None
    scored: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def record(self, error: TaskError) -> None:
        with self._lock:
            if self.first is None:
                self.first = error

    def count_scored(self) -> None:
        with self._lock:
            self.scored += 1

    def __getstate__(self) -> dict[str, Any]:  # a copied or pickled problem gets a lock of its own
        return {"first": self.first, "scored": self.scored}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.first, self.scored, self._lock = state["first"], state["scored"], threading.Lock()


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
        return score

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

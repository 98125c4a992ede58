"""Scoring a problem's current parameters on a few examples, outside any run.

This is the original Trace-Bench's public evaluation API for external optimizers
(``trace_bench.integrations.opto``): take the validation split when the problem has one (else
the training split), run the parameter on the first ``max_examples`` inputs, score each with the
guide, and return the mean reward plus one record per example.  Nothing is metered or written:
a job's measurements use :mod:`trace_bench.runner.job.measure` instead.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from trace_bench.tasks.guide import call_guide

_SPLITS = ("validate_dataset", "validation_dataset", "train_dataset")


@dataclass
class ProblemEvaluation:
    reward: float
    feedback: str
    score_dict: dict[str, float] | None


def _split(problem: dict[str, Any]) -> tuple[list[Any], list[Any]]:
    for key in _SPLITS:
        data = problem.get(key) or {}
        inputs, infos = list(data.get("inputs") or []), list(data.get("infos", data.get("info")) or [])
        if inputs and infos:
            return inputs, infos
    return [], []


def response_of(param: Any, x: Any) -> Any:
    """What the guide scores: a bare parameter's value, else the agent's output (unwrapped)."""
    try:
        from opto.trace.nodes import ParameterNode
    except ImportError:  # pragma: no cover - opto is a dependency
        ParameterNode = ()  # noqa: N806
    if isinstance(param, ParameterNode) or not callable(param):
        return getattr(param, "data", param)
    output = param(x)
    return getattr(output, "data", output)


def evaluate_problem(problem: dict[str, Any], max_examples: int = 1,
                     strict_score_dict: bool = False) -> tuple[float, list[ProblemEvaluation]]:
    """(mean reward, per-example records); ``strict_score_dict`` re-raises a failing ``get_score_dict``."""
    inputs, infos = _split(problem)
    pairs = list(zip(inputs, infos, strict=False))[: max(1, int(max_examples))]
    if not pairs:
        raise ValueError("the problem has no evaluable examples (validate_dataset and train_dataset are empty)")
    param, guide = problem["param"], problem["guide"]
    records: list[ProblemEvaluation] = []
    for x, info in pairs:
        response = response_of(param, x)
        reward, feedback = call_guide(guide, x, response, info)
        score_dict = None
        scorer = getattr(guide, "get_score_dict", None)
        if callable(scorer):
            try:
                score_dict = {str(k): float(v) for k, v in scorer(x, response, info).items()}
            except Exception:
                if strict_score_dict:
                    raise
        records.append(ProblemEvaluation(float(reward), feedback, score_dict))
    rewards = [r.reward for r in records]
    mean = sum(rewards) / len(rewards)
    return (mean if math.isfinite(mean) else float("nan")), records


def load_and_evaluate(task_id: str, tasks_root: str | None = None, eval_kwargs: dict[str, Any] | None = None,
                      max_examples: int = 1, strict_score_dict: bool = False
                      ) -> tuple[dict[str, Any], float, list[ProblemEvaluation]]:
    """Build ``task_id`` and evaluate its initial parameters: (problem, mean reward, records)."""
    from trace_bench.legacy.registry import load_task_bundle

    problem = load_task_bundle(task_id, tasks_root, eval_kwargs)
    mean, records = evaluate_problem(problem, max_examples=max_examples, strict_score_dict=strict_score_dict)
    return problem, mean, records

"""What a task adds to its job's record about the best state: the evaluator's metrics, the distance
to the best known value and whether the score was computed out of the candidate's reach.

A task's guide opts in with ``report_fields(value) -> dict`` (discovery tasks do); the value is
the best state's trainable parameter.  Fields the record does not know are dropped, so a task can
never write over the harness's own columns.
"""

from __future__ import annotations

from typing import Any

TASK_FIELDS = ("metrics_best", "pct_of_best_known", "pct_of_alphaevolve", "score_trust", "best_known",
               "best_known_source", "best_known_score")


def task_report_fields(problem: Any, best_state: list[Any]) -> dict[str, Any]:
    hook = getattr(problem.guide, "report_fields", None)
    if not callable(hook) or len(best_state) != 1:
        return {}
    fields = dict(hook(best_state[0]) or {})
    reference = fields.pop("best_known", None)
    if isinstance(reference, dict):
        fields["best_known"] = reference.get("value")
        fields["best_known_source"] = str(reference.get("source") or "")
        fields["best_known_score"] = reference.get("score")
    return {key: value for key, value in fields.items() if key in TASK_FIELDS}

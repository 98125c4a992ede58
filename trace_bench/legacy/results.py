"""Per-job rows in the original Trace-Bench's shape, for code that reads ``BenchRunner.run().results``,
and its ``build_leaderboard_rows``.

A row keeps every field of our :class:`~trace_bench.store.models.JobResult` (which, since version 4,
holds ``eval_kwargs`` and the ``resolved_*`` settings itself) and adds the original's names for the
same facts, computed exactly as results.csv's trailing columns are
(:func:`trace_bench.store.legacy_columns.legacy_values`): ``task_id``, ``trainer_id``,
``score_val_initial`` / ``score_val_final`` / ``score_val``, ``feedback``, ``token_scope``, the
relative state-file paths; plus ``raw_params``.  :data:`LEGACY_COLUMNS` lists the original's
results.csv columns in its order.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from trace_bench.store.legacy_columns import TOKEN_SCOPE, legacy_values, state_paths

__all__ = ["LEGACY_COLUMNS", "LEADERBOARD_COLUMNS", "TOKEN_SCOPE", "build_leaderboard_rows", "legacy_row",
           "select_best_state", "state_paths", "token_scope_note"]

LEGACY_COLUMNS = (
    "run_id", "job_id", "task_id", "suite", "trainer_id", "seed", "status", "score_val_initial",
    "score_val_final", "score_val", "score_test", "time_seconds", "resolved_optimizer", "resolved_guide",
    "resolved_logger", "resolved_trainer_kwargs", "resolved_optimizer_kwargs", "resolved_guide_kwargs",
    "resolved_logger_kwargs", "eval_kwargs", "feedback", "llm_provider", "llm_model", "llm_base_url",
    "token_scope", "prompt_tokens", "completion_tokens", "total_tokens", "initial_state_path",
    "best_state_path", "final_state_path", "state_history_path", "tb_logdir",
)
LEADERBOARD_COLUMNS = ("rank", "task_id", "suite", "job_id", "trainer_id", "resolved_optimizer", "score_val",
                       "score_test", "time_seconds")


def legacy_row(record: Any, spec: Any = None) -> dict[str, Any]:
    """``record`` (a JobResult) as a dict with the original's keys added.  ``spec`` (the job's
    JobSpec) is accepted for callers of the earlier signature; the record carries everything."""
    row: dict[str, Any] = record.model_dump(mode="json")
    row.pop("spec", None)  # the original's rows are flat: the specification's columns are there already
    row.update(legacy_values(record))
    row["raw_params"] = dict(record.spec.params)
    return row


def select_best_state(initial: Any, final: Any, initial_score: float | None, final_score: float | None) -> Any:
    """The better of two states by score, as our best-so-far rule picks it (a state without a
    finite score never wins; on a tie the earlier, ``initial``, stays)."""
    from trace_bench.runner.job.recorder import BestSoFar

    best = BestSoFar()
    best.offer(initial_score, [initial], {})
    best.offer(final_score, [final], {})
    return final if best.state is None else best.state[0]


def token_scope_note() -> str:
    """What the token columns count: ``all_roles`` here (the original's was
    ``trace_optimization_only``: it counted the optimizer's calls only, and recorded 0)."""
    return TOKEN_SCOPE


def _score(row: dict[str, Any]) -> float | None:
    for key in ("score_val", "score_best"):
        value = row.get(key)
        if value not in (None, ""):
            try:
                return float(value)
            except (TypeError, ValueError):
                return None
    return None


def build_leaderboard_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The original's leaderboard of result rows: jobs with status ``ok`` only, the best row (by
    ``score_val``, or our ``score_best``) per (task, trainer, optimizer), tasks in order and the
    best first within a task.  ``rank`` counts within each task (the original counted over the
    whole table).  trace-bench's own leaderboard.csv aggregates over seeds instead (docs/artifacts.md)."""
    best: dict[tuple[str, str, str], dict[str, Any]] = {}
    for row in rows:
        if str(row.get("status")) != "ok":
            continue
        key = (str(row.get("task_id") or row.get("task") or ""), str(row.get("trainer_id") or row.get("trainer") or ""),
               str(row.get("resolved_optimizer") or ""))
        kept = best.get(key)
        if kept is None or (_score(row) or float("-inf")) > (_score(kept) or float("-inf")):
            best[key] = row
    by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for (task, trainer, optimizer), row in best.items():
        by_task[task].append({"task_id": task, "suite": row.get("suite", ""), "job_id": row.get("job_id", ""),
                              "trainer_id": trainer, "resolved_optimizer": optimizer, "score_val": _score(row),
                              "score_test": row.get("score_test"), "time_seconds": row.get("time_seconds")})
    board: list[dict[str, Any]] = []
    for task in sorted(by_task):
        ranked = sorted(by_task[task], key=lambda r: (r["score_val"] is None, -(r["score_val"] or 0.0), r["trainer_id"]))
        board.extend({"rank": position, **row} for position, row in enumerate(ranked, start=1))
    return board

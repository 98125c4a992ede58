"""The original Trace-Bench's results.csv columns, computed from our job record.

Readers written for the original (notebooks, pandas scripts, its test-suite) look up
``task_id``, ``trainer_id``, ``score_val`` and friends by name.  results.csv keeps our columns and
their order, and appends these (:data:`~trace_bench.store.models.LEGACY_CSV_COLUMNS`) at its end:
nothing of ours is renamed or moved.  The mapping of each old name:

- ``task_id``, ``trainer_id``: our ``task`` and ``trainer``;
- ``score_val_initial``, ``score_val_final``, ``score_val``: our ``score_initial``, ``score_final``
  and ``score_best`` (the original's ``score_val`` was the larger of initial and final; ours is the
  best over every measured state, which is never lower);
- ``feedback``: our ``error`` (empty for a job that ended ok);
- ``resolved_*``, ``eval_kwargs``, ``llm_provider``, ``llm_base_url``: the record's own fields;
- ``token_scope``: ``all_roles``: our token columns count every role's calls (optimizer, agent,
  judge), where the original counted the optimizer's only;
- the ``*_state_path`` and ``tb_logdir`` columns: paths relative to the run directory.
"""

from __future__ import annotations

from typing import Any

from trace_bench.store.models import JobResult
from trace_bench.store.models.spec import RESOLVED_PREFIX, Resolution

RESOLUTION_FIELDS = tuple(Resolution.model_fields)

TOKEN_SCOPE = "all_roles"


def state_paths(job_id: str) -> dict[str, str]:
    """The original's relative paths of a job's state files."""
    base = f"jobs/{job_id}/artifacts"
    return {"initial_state_path": f"{base}/initial_state.yaml", "best_state_path": f"{base}/best_state.yaml",
            "final_state_path": f"{base}/final_state.yaml", "state_history_path": f"{base}/state_history.jsonl"}


def legacy_values(record: JobResult) -> dict[str, Any]:
    """Every column of ``LEGACY_CSV_COLUMNS`` for ``record`` (Python values, as the table writes them)."""
    spec = record.spec
    values: dict[str, Any] = {
        "task_id": spec.task, "trainer_id": spec.trainer, "score_val_initial": record.score_initial,
        "score_val_final": record.score_final, "score_val": record.score_best, "feedback": record.error,
        "token_scope": TOKEN_SCOPE, "tb_logdir": f"jobs/{spec.job_id}/tb", **state_paths(spec.job_id),
        "eval_kwargs": spec.eval_kwargs, **spec.endpoint(),
    }
    resolved = record.resolved
    values.update({RESOLVED_PREFIX + name: getattr(resolved, name) for name in RESOLUTION_FIELDS})
    return values

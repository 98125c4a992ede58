"""Per-job rows in the original Trace-Bench's shape, for code that reads ``BenchRunner.run().results``.

A row keeps every field of our :class:`~trace_bench.store.models.JobResult` and adds the
original's names for the same facts: ``task_id``, ``trainer_id``, ``score_val_initial`` /
``score_val_final`` / ``score_val`` (our initial, final and best selection scores),
``feedback`` (our ``error``), ``raw_params``, ``eval_kwargs``, the ``resolved_*`` settings,
``llm_provider`` / ``llm_base_url``, ``token_scope`` and the relative state-file paths.
:data:`LEGACY_COLUMNS` lists them in the original's results.csv order.
"""

from __future__ import annotations

from typing import Any

LEGACY_COLUMNS = (
    "run_id", "job_id", "task_id", "suite", "trainer_id", "seed", "status", "score_val_initial",
    "score_val_final", "score_val", "score_test", "time_seconds", "resolved_optimizer", "resolved_guide",
    "resolved_logger", "resolved_trainer_kwargs", "resolved_optimizer_kwargs", "resolved_guide_kwargs",
    "resolved_logger_kwargs", "eval_kwargs", "feedback", "llm_provider", "llm_model", "llm_base_url",
    "token_scope", "prompt_tokens", "completion_tokens", "total_tokens", "initial_state_path",
    "best_state_path", "final_state_path", "state_history_path", "tb_logdir",
)
TOKEN_SCOPE = "all_roles"  # our token figures cover optimizer, agent and judge calls alike


def state_paths(job_id: str) -> dict[str, str]:
    base = f"jobs/{job_id}/artifacts"
    return {"initial_state_path": f"{base}/initial_state.yaml", "best_state_path": f"{base}/best_state.yaml",
            "final_state_path": f"{base}/final_state.yaml", "state_history_path": f"{base}/state_history.jsonl"}


def legacy_row(record: Any, spec: Any = None) -> dict[str, Any]:
    """``record`` (a JobResult) as a dict with the original's keys added; ``spec`` (the job's
    JobSpec) supplies what a result does not carry (eval kwargs, resolved settings, LLM endpoint)."""
    row: dict[str, Any] = record.model_dump(mode="json")
    llm = dict(getattr(spec, "llm", None) or {})
    row.update({
        "task_id": record.task, "trainer_id": record.trainer, "score_val_initial": record.score_initial,
        "score_val_final": record.score_final, "score_val": record.score_best, "feedback": record.error,
        "raw_params": dict(record.params), "eval_kwargs": dict(getattr(spec, "eval_kwargs", None) or {}),
        "resolved_trainer_kwargs": dict(getattr(spec, "trainer_kwargs", None) or {}),
        "resolved_optimizer": (getattr(spec, "optimizer", None) or "OptoPrime") if spec is not None else None,
        "resolved_optimizer_kwargs": dict(getattr(spec, "optimizer_kwargs", None) or {}),
        "resolved_guide": None, "resolved_guide_kwargs": {},
        "resolved_logger": getattr(spec, "logger", None), "resolved_logger_kwargs": {},
        "llm_provider": llm.get("provider") or ("stub" if record.mode == "stub" else ""),
        "llm_base_url": llm.get("base_url") or "", "token_scope": TOKEN_SCOPE, "tb_logdir": "",
        **state_paths(record.job_id),
    })
    return row

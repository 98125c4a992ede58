"""Versioned on-disk records.  Per-job ``results.json`` is the source of truth; every table of a
run (results.csv, summary.json, leaderboard.csv) is rebuilt from these records."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict, Field

SCHEMA_VERSION = 1

STATUSES = ("ok", "failed", "timeout", "oom", "budget_exhausted", "skipped", "infra_error", "interrupted")
SCORED_STATUSES = frozenset({"ok", "budget_exhausted"})


class _Record(BaseModel):
    model_config = ConfigDict(extra="allow")
    schema_version: int = SCHEMA_VERSION


class JobResult(_Record):
    run_id: str
    job_id: str
    task: str
    suite: str
    trainer: str
    params: dict[str, Any] = Field(default_factory=dict)
    params_label: str = "default"
    seed: int
    mode: str
    llm_model: str = ""
    status: str
    error: str = ""
    traceback: str = ""
    score_initial: float | None = None
    score_final: float | None = None
    score_best: float | None = None
    score_test: float | None = None
    selection_split: str = "train"
    n_steps: int = 0
    n_evals: int = 0
    llm_calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    tokens_estimated: bool = False
    cost_usd: float = 0.0
    llm_errors: int = 0
    llm_retries: int = 0
    time_seconds: float = 0.0
    started_at: str = ""
    finished_at: str = ""
    attempt: int = 1
    score_dict_best: dict[str, float] = Field(default_factory=dict)
    best_state_failed: bool = False  # the best state raised or gave an unscorable output on a selection example
    usage_by_role: dict[str, Any] = Field(default_factory=dict)
    budget_spent: dict[str, float] = Field(default_factory=dict)


CSV_COLUMNS = (
    "run_id", "job_id", "task", "suite", "trainer", "params", "params_label", "seed", "mode", "llm_model",
    "status", "error", "score_initial", "score_final", "score_best", "score_test", "selection_split",
    "n_steps", "n_evals", "llm_calls", "cache_hits", "prompt_tokens", "completion_tokens", "total_tokens",
    "tokens_estimated", "cost_usd", "time_seconds", "started_at", "finished_at",
)

CURVE_COLUMNS = ("step", "wall_s", "n_evals", "llm_calls", "tokens", "usd", "score", "best_score")

LEADERBOARD_COLUMNS = (
    "task", "suite", "rank", "trainer", "params_label", "count", "failed", "mean_best", "std_best",
    "ci95_low", "ci95_high", "mean_test", "mean_initial", "mean_llm_calls", "mean_tokens", "mean_cost_usd",
)

"""What trackers export, read from a run directory through the store: run params, per-job curves
and final metrics.

Only jobs with a ``results.json`` are exported (a job that never ended has nothing final to
report); its curve comes from ``artifacts/curve.csv``, whose torn rows the store drops.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trace_bench._util.masking import mask_secrets
from trace_bench.store.job_store import JobStore
from trace_bench.store.models import COUNTED, OBJECTIVE_PREFIX, JobResult, StoreError, Summary
from trace_bench.store.run_store import RunStore

CURVE_METRICS = ("best_score", "score", *COUNTED, "n_evals", "wall_s")
FINAL_METRICS = ("score_initial", "score_final", "score_best", "score_test", "n_steps", "n_evals", "llm_calls",
                 "prompt_tokens", "completion_tokens", "total_tokens", "cost_usd", "time_seconds")
JOB_PARAMS = ("task", "suite", "trainer", "params_label", "seed", "mode", "llm_model", "status", "attempt")
MAX_PARAM_CHARS = 500  # MLflow rejects longer param values


@dataclass
class JobExport:
    job: JobStore
    results: JobResult
    curve: list[dict[str, float]] = field(default_factory=list)

    @property
    def job_id(self) -> str:
        return self.job.job_id

    @property
    def params(self) -> dict[str, str]:
        row = {**self.results.columns(), "attempt": self.results.attempt}
        out = {k: _param(row[k]) for k in JOB_PARAMS if row[k] is not None}
        for key, value in self.results.spec.params.items():
            out[f"param.{key}"] = _param(value)
        return out

    @property
    def final_metrics(self) -> dict[str, float]:
        out = {}
        for key in FINAL_METRICS:
            value = getattr(self.results, key)
            if isinstance(value, (int, float)) and not isinstance(value, bool):
                out[key] = float(value)
        for key, value in self.results.score_dict_best.items():
            if value is not None:
                out[f"obj.{key}"] = float(value)
        return out


def _param(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return mask_secrets(text)[:MAX_PARAM_CHARS]


def read_curve(job: JobStore) -> list[dict[str, float]]:
    """A job's curve points with the numeric cells only, objectives as ``obj_<metric>`` keys like
    the CSV's columns (none when the curve is unreadable)."""
    try:
        rows = job.read_curve()
    except StoreError:
        return []
    points = []
    for row in rows:
        cells = row.model_dump(exclude={"schema_version", "objectives", "kind"})  # numbers only
        cells.update({OBJECTIVE_PREFIX + name: value for name, value in row.objectives.items()})
        points.append({k: float(v) for k, v in cells.items() if v is not None})
    return points


def iter_jobs(run_dir: Path) -> Iterator[JobExport]:
    store = RunStore(run_dir)
    for job_id in store.job_ids():
        job = store.job(job_id)
        results = job.result_or_none()
        if results is not None:
            yield JobExport(job, results, read_curve(job))


def run_params(run_dir: Path) -> dict[str, str]:
    """The config snapshot flattened to ``a.b.c`` keys (masked and cut to MLflow's length limit)."""
    try:
        config = RunStore(run_dir).read_snapshot() or {}
    except StoreError:
        return {}
    flat: dict[str, str] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict) and value:
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        else:
            flat[prefix] = _param(value)

    walk("", config)
    return flat


def run_summary(run_dir: Path) -> Summary | None:
    try:
        return RunStore(run_dir).read_summary()
    except StoreError:
        return None

"""What trackers export, read from a run directory: run params, per-job curves and final metrics.

Only jobs with a ``results.json`` are exported (a job that never ended has nothing final to
report); its curve comes from ``artifacts/curve.csv``, whose torn rows are skipped.
"""

from __future__ import annotations

import csv
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from trace_bench.store.masking import mask_secrets

CURVE_METRICS = ("best_score", "score", "llm_calls", "tokens", "usd", "n_evals", "wall_s")
FINAL_METRICS = ("score_initial", "score_final", "score_best", "score_test", "n_steps", "n_evals", "llm_calls",
                 "prompt_tokens", "completion_tokens", "total_tokens", "cost_usd", "time_seconds")
JOB_PARAMS = ("task", "suite", "trainer", "params_label", "seed", "mode", "llm_model", "status", "attempt")
MAX_PARAM_CHARS = 500  # MLflow rejects longer param values


@dataclass
class JobExport:
    job_id: str
    root: Path
    results: dict[str, Any]
    curve: list[dict[str, float]] = field(default_factory=list)

    @property
    def params(self) -> dict[str, str]:
        out = {k: _param(self.results.get(k)) for k in JOB_PARAMS if self.results.get(k) is not None}
        for key, value in (self.results.get("params") or {}).items():
            out[f"param.{key}"] = _param(value)
        return out

    @property
    def final_metrics(self) -> dict[str, float]:
        out = {}
        for key in FINAL_METRICS:
            value = self.results.get(key)
            if isinstance(value, (int, float)) and not isinstance(value, bool) and value == value:
                out[key] = float(value)
        for key, value in (self.results.get("score_dict_best") or {}).items():
            if isinstance(value, (int, float)):
                out[f"obj.{key}"] = float(value)
        return out


def _param(value: Any) -> str:
    text = value if isinstance(value, str) else json.dumps(value, sort_keys=True, default=str)
    return mask_secrets(text)[:MAX_PARAM_CHARS]


def read_curve(path: Path) -> list[dict[str, float]]:
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
    except (OSError, csv.Error):
        return []
    points = []
    for row in rows:
        point: dict[str, float] = {}
        for key, text in row.items():
            try:
                point[str(key)] = float(text)
            except (TypeError, ValueError):
                continue
        if "step" in point:
            points.append(point)
    return points


def iter_jobs(run_dir: Path) -> Iterator[JobExport]:
    for job_dir in sorted((run_dir / "jobs").glob("*/")):
        try:
            results = json.loads((job_dir / "results.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(results, dict):
            yield JobExport(job_dir.name, job_dir, results, read_curve(job_dir / "artifacts" / "curve.csv"))


def run_params(run_dir: Path) -> dict[str, str]:
    """The config snapshot flattened to ``a.b.c`` keys (masked and cut to MLflow's length limit)."""
    try:
        config = yaml.safe_load((run_dir / "meta" / "config.snapshot.yaml").read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return {}
    flat: dict[str, str] = {}

    def walk(prefix: str, value: Any) -> None:
        if isinstance(value, dict) and value:
            for key, inner in value.items():
                walk(f"{prefix}.{key}" if prefix else str(key), inner)
        else:
            flat[prefix] = _param(value)

    walk("", config if isinstance(config, dict) else {})
    return flat


def run_summary(run_dir: Path) -> dict[str, Any]:
    try:
        data = json.loads((run_dir / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}

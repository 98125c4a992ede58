"""The original Trace-Bench's ``trace_bench.integrations.mlflow_client`` hooks, on our MLflow tracker.

The original logged to MLflow as a run went (``log_run_start``, ``log_job_result`` per job,
``log_run_end``).  trace-bench exports a run to MLflow from its directory instead
(``trace_bench.trackers``; done by ``trace-bench run`` itself when ``MLFLOW_TRACKING_URI`` is set),
so these hooks keep the original's contract for scripts that call them: each is a no-op that
returns ``None`` unless ``MLFLOW_TRACKING_URI`` is set and ``mlflow`` imports; then
``log_run_end`` exports the whole run (jobs, curves, artifacts) and ``log_job_result`` does nothing
of its own, since the export covers every job.  None of them ever raises: a tracker failure is a
``tracker_warning`` event of the run.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class MlflowContext:
    run_dir: Path


def _mlflow_available() -> bool:
    if not os.environ.get("MLFLOW_TRACKING_URI"):
        return False
    try:
        return importlib.import_module("mlflow") is not None
    except ImportError:
        return False


def log_run_start(run_dir: str | Path, snapshot: dict[str, Any] | None = None, env: dict[str, Any] | None = None,
                  git: dict[str, Any] | None = None) -> MlflowContext | None:
    """A context for the other hooks, or ``None`` when MLflow is not configured or not installed."""
    return MlflowContext(Path(run_dir)) if _mlflow_available() else None


def log_job_result(ctx: MlflowContext | None, job: Any = None, row: Any = None) -> None:
    """Nothing to do per job: :func:`log_run_end` exports every job of the run."""


def log_run_end(ctx: MlflowContext | None, summary: Any = None) -> None:
    """Export the run to MLflow (when ``ctx`` is not ``None``)."""
    if ctx is None:
        return
    from trace_bench.trackers import export_run

    export_run(ctx.run_dir, ["mlflow"])

"""``trace_bench.integrations.mlflow_client``: the original Trace-Bench's MLflow hooks, kept at their
path for existing scripts; the implementation is :mod:`trace_bench.legacy.mlflow_client`."""

from __future__ import annotations

from trace_bench.legacy.mlflow_client import MlflowContext, log_job_result, log_run_end, log_run_start

__all__ = ["MlflowContext", "log_job_result", "log_run_end", "log_run_start"]

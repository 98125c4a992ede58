"""MLflow: one parent run per trace-bench run, one nested run per job with per-step metrics.

The tracking URI comes from ``MLFLOW_TRACKING_URI`` (or MLflow's own default), the experiment from
``MLFLOW_EXPERIMENT_NAME`` (default ``trace-bench``).  Exporting is idempotent: the parent run is
found again by its ``trace_bench.run_id`` tag, and a job's nested run is replaced only when the
job ran again (a resume), so exporting after every resume never duplicates anything.
"""

from __future__ import annotations

import os
from datetime import datetime
from pathlib import Path
from typing import Any

from trace_bench.store.run_store import RunStore
from trace_bench.store.status import COMPLETE, Status
from trace_bench.trackers.source import CURVE_METRICS, JobExport, iter_jobs, run_params, run_summary

EXPERIMENT = "trace-bench"
_BATCH = 200  # metrics per log_batch call (MLflow accepts up to 1000)


def _millis(stamp: Any, offset_s: float = 0.0) -> int:
    try:
        base = datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        base = datetime.now().astimezone().timestamp()
    return int((base + offset_s) * 1000)


def _status(status: str) -> str:
    if status in COMPLETE:
        return "FINISHED"
    return "KILLED" if status == Status.INTERRUPTED else "FAILED"


def _run_artifacts(store: RunStore) -> list[Path]:
    return [store.results_csv_path, store.summary_path, store.leaderboard_path, store.report_path,
            store.snapshot_path, store.manifest_path]


def export_mlflow(run_dir: Path, tracking_uri: str | None = None, experiment: str | None = None) -> str:
    """Export ``run_dir``; returns the MLflow id of the parent run."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or None)
    name = experiment or os.environ.get("MLFLOW_EXPERIMENT_NAME") or EXPERIMENT
    found = client.get_experiment_by_name(name)
    experiment_id = found.experiment_id if found is not None else client.create_experiment(name)
    summary = run_summary(run_dir)
    run_id = (summary.run_id if summary is not None else "") or run_dir.name
    parent = _parent_run(client, experiment_id, run_id, run_dir)
    existing = {r.data.tags.get("trace_bench.job_id"): r for r in client.search_runs(
        [experiment_id], filter_string=f"tags.`mlflow.parentRunId` = '{parent}'", max_results=50000)}
    for job in iter_jobs(run_dir):
        previous = existing.get(job.job_id)
        if previous is not None:
            if previous.data.tags.get("trace_bench.finished_at") == job.results.finished_at:
                continue
            client.delete_run(previous.info.run_id)
        _export_job(client, experiment_id, parent, job)
    if summary is not None:
        metrics = {"jobs_total": float(summary.total_jobs), "llm_calls": float(summary.llm_calls),
                   "tokens_total": float(summary.token_totals.total), "cost_usd": float(summary.cost_usd)}
        metrics.update({f"jobs_{k}": float(v) for k, v in summary.counts.items()})
        _log_metrics(client, parent, [(k, v, 0, _millis(summary.created_at)) for k, v in metrics.items()])
    store = RunStore(run_dir)
    for path in _run_artifacts(store):
        if path.is_file():
            relative = path.relative_to(store.root)
            client.log_artifact(parent, str(path), str(relative.parent) if relative.parent != Path(".") else None)
    interrupted = summary is not None and summary.counts.get(Status.INTERRUPTED.value)
    client.set_terminated(parent, "KILLED" if interrupted else "FINISHED")
    return parent


def _parent_run(client: Any, experiment_id: str, run_id: str, run_dir: Path) -> str:
    from mlflow.entities import Param

    found = client.search_runs([experiment_id], filter_string=f"tags.`trace_bench.run_id` = '{run_id}' and "
                               "tags.`trace_bench.kind` = 'run'", max_results=1)
    if found:
        return str(found[0].info.run_id)
    run = client.create_run(experiment_id, tags={"mlflow.runName": run_id, "trace_bench.run_id": run_id,
                                                 "trace_bench.kind": "run", "trace_bench.run_dir": str(run_dir)})
    params = [Param(k, v) for k, v in run_params(run_dir).items()]
    for start in range(0, len(params), 100):
        client.log_batch(run.info.run_id, params=params[start:start + 100])
    return str(run.info.run_id)


def _export_job(client: Any, experiment_id: str, parent: str, job: JobExport) -> None:
    from mlflow.entities import Param

    results = job.results
    name = f"{results.spec.task} x {results.spec.trainer} s{results.spec.seed}"
    run = client.create_run(experiment_id, tags={
        "mlflow.runName": name, "mlflow.parentRunId": parent, "trace_bench.kind": "job",
        "trace_bench.job_id": job.job_id, "trace_bench.finished_at": results.finished_at,
        "trace_bench.status": str(results.status)})
    job_run = run.info.run_id
    client.log_batch(job_run, params=[Param(k, v) for k, v in job.params.items()][:100])
    points = [(key, point[key], int(point["step"]), _millis(results.started_at, point.get("wall_s", 0.0)))
              for point in job.curve for key in CURVE_METRICS if key in point]
    last_step = int(job.curve[-1]["step"]) if job.curve else 0
    finished = _millis(results.finished_at)
    points += [(f"final_{k}", v, last_step, finished) for k, v in job.final_metrics.items()]
    _log_metrics(client, job_run, points)
    if job.job.artifacts_dir.is_dir():
        client.log_artifacts(job_run, str(job.job.artifacts_dir), "artifacts")
    for path in (job.job.results_path, job.job.meta_path):
        if path.is_file():
            client.log_artifact(job_run, str(path))
    client.set_terminated(job_run, _status(str(results.status)))


def _log_metrics(client: Any, run_id: str, points: list[tuple[str, float, int, int]]) -> None:
    from mlflow.entities import Metric

    metrics = [Metric(key, float(value), timestamp, step) for key, value, step, timestamp in points]
    for start in range(0, len(metrics), _BATCH):
        client.log_batch(run_id, metrics=metrics[start:start + _BATCH])

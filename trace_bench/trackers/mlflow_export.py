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

from trace_bench.trackers.source import CURVE_METRICS, JobExport, iter_jobs, run_params, run_summary

EXPERIMENT = "trace-bench"
RUN_ARTIFACTS = ("results.csv", "summary.json", "leaderboard.csv", "report.html", "meta/config.snapshot.yaml",
                 "meta/manifest.json")
JOB_FILES = ("results.json", "job_meta.json")
_BATCH = 200  # metrics per log_batch call (MLflow accepts up to 1000)


def _millis(stamp: Any, offset_s: float = 0.0) -> int:
    try:
        base = datetime.fromisoformat(str(stamp).replace("Z", "+00:00")).timestamp()
    except ValueError:
        base = datetime.now().astimezone().timestamp()
    return int((base + offset_s) * 1000)


def _status(status: str) -> str:
    if status in ("ok", "budget_exhausted", "skipped"):
        return "FINISHED"
    return "KILLED" if status == "interrupted" else "FAILED"


def export_mlflow(run_dir: Path, tracking_uri: str | None = None, experiment: str | None = None) -> str:
    """Export ``run_dir``; returns the MLflow id of the parent run."""
    from mlflow.tracking import MlflowClient

    client = MlflowClient(tracking_uri=tracking_uri or os.environ.get("MLFLOW_TRACKING_URI") or None)
    name = experiment or os.environ.get("MLFLOW_EXPERIMENT_NAME") or EXPERIMENT
    found = client.get_experiment_by_name(name)
    experiment_id = found.experiment_id if found is not None else client.create_experiment(name)
    summary = run_summary(run_dir)
    run_id = str(summary.get("run_id") or run_dir.name)
    parent = _parent_run(client, experiment_id, run_id, run_dir)
    existing = {r.data.tags.get("trace_bench.job_id"): r for r in client.search_runs(
        [experiment_id], filter_string=f"tags.`mlflow.parentRunId` = '{parent}'", max_results=50000)}
    for job in iter_jobs(run_dir):
        previous = existing.get(job.job_id)
        if previous is not None:
            if previous.data.tags.get("trace_bench.finished_at") == str(job.results.get("finished_at")):
                continue
            client.delete_run(previous.info.run_id)
        _export_job(client, experiment_id, parent, job)
    metrics = {"jobs_total": float(summary.get("total_jobs") or 0), "llm_calls": float(summary.get("llm_calls") or 0),
               "tokens_total": float((summary.get("token_totals") or {}).get("total") or 0),
               "cost_usd": float(summary.get("cost_usd") or 0.0)}
    metrics.update({f"jobs_{k}": float(v) for k, v in (summary.get("counts") or {}).items()})
    _log_metrics(client, parent, [(k, v, 0, _millis(summary.get("created_at"))) for k, v in metrics.items()])
    for relative in RUN_ARTIFACTS:
        path = run_dir / relative
        if path.is_file():
            client.log_artifact(parent, str(path), str(Path(relative).parent) if "/" in relative else None)
    client.set_terminated(parent, "FINISHED" if not summary.get("counts", {}).get("interrupted") else "KILLED")
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
    name = f"{results.get('task', '?')} x {results.get('trainer', '?')} s{results.get('seed', '?')}"
    run = client.create_run(experiment_id, tags={
        "mlflow.runName": name, "mlflow.parentRunId": parent, "trace_bench.kind": "job",
        "trace_bench.job_id": job.job_id, "trace_bench.finished_at": str(results.get("finished_at")),
        "trace_bench.status": str(results.get("status"))})
    job_run = run.info.run_id
    client.log_batch(job_run, params=[Param(k, v) for k, v in job.params.items()][:100])
    started = results.get("started_at")
    points = [(key, point[key], int(point["step"]), _millis(started, point.get("wall_s", 0.0)))
              for point in job.curve for key in CURVE_METRICS if key in point]
    last_step = int(job.curve[-1]["step"]) if job.curve else 0
    finished = _millis(results.get("finished_at"))
    points += [(f"final_{k}", v, last_step, finished) for k, v in job.final_metrics.items()]
    _log_metrics(client, job_run, points)
    artifacts = job.root / "artifacts"
    if artifacts.is_dir():
        client.log_artifacts(job_run, str(artifacts), "artifacts")
    for file_name in JOB_FILES:
        if (job.root / file_name).is_file():
            client.log_artifact(job_run, str(job.root / file_name))
    client.set_terminated(job_run, _status(str(results.get("status"))))


def _log_metrics(client: Any, run_id: str, points: list[tuple[str, float, int, int]]) -> None:
    from mlflow.entities import Metric

    metrics = [Metric(key, float(value), timestamp, step) for key, value, step, timestamp in points]
    for start in range(0, len(metrics), _BATCH):
        client.log_batch(run_id, metrics=metrics[start:start + _BATCH])

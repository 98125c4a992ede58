"""Weights & Biases: one W&B run per job, grouped under the trace-bench run, plus one for the run.

W&B has no nested runs; its *group* is the parent: every job's W&B run has ``group`` = the
trace-bench run id and ``job_type`` ``job``, and a last W&B run (``job_type`` ``run``) holds the
run's config, summary metrics and leaderboard.  A job's W&B run holds its params as config, its
status and mode as tags, one history row per ``curve.csv`` row (``step``, ``best_score``,
``score``, ``llm_calls``, ``tokens``, ``usd``, ``n_evals``, ``wall_s``: ``step`` is the default x
axis, and any spend column can be chosen as one: the anytime curves), its final metrics as the
summary, and its LLM transcript as a table (the first :data:`TRANSCRIPT_ROWS` calls, texts cut to
:data:`TEXT_CHARS`).  A failed job's W&B run ends with exit code 1.

W&B reads its own environment: ``WANDB_PROJECT`` (default ``trace-bench``), ``WANDB_ENTITY``,
``WANDB_MODE`` (``offline`` writes under ``WANDB_DIR`` for a later ``wandb sync``), ``WANDB_API_KEY``.
The exporter asks W&B for no git, code, console, system-metrics or machine capture (none of it
belongs to a run that already ended) and turns W&B's error reporting off unless
``WANDB_ERROR_REPORTING`` says otherwise.  W&B run ids are ``<run_id>-<job_id>-<attempt>`` (and
``<run_id>-run``), so exporting a run again addresses the same W&B runs, and a job re-run by a
resume gets a W&B run of its own.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

from trace_bench._util.masking import mask_secrets
from trace_bench.store.models import StoreError
from trace_bench.store.run_store import RunStore
from trace_bench.store.status import COMPLETE
from trace_bench.trackers.source import CURVE_METRICS, JobExport, iter_jobs, run_params, run_summary

PROJECT = "trace-bench"
TRANSCRIPT_ROWS = 500
TEXT_CHARS = 4000
TRANSCRIPT_COLUMNS = ["call", "step", "role", "phase", "caller", "model", "prompt", "answer", "prompt_tokens",
                      "completion_tokens", "outcome"]
#: W&B settings that keep an export to what the run directory holds (set where the W&B version knows them)
_QUIET: dict[str, Any] = {"silent": True, "save_code": False, "disable_git": True, "disable_code": True, "console": "off",
          "x_disable_stats": True, "x_disable_machine_info": True, "x_disable_meta": True}


def export_wandb(run_dir: Path, project: str | None = None) -> list[str]:
    """Export ``run_dir``; returns the W&B run ids written (each job's, then the run's)."""
    os.environ.setdefault("WANDB_ERROR_REPORTING", "false")
    import wandb

    known = getattr(wandb.Settings, "model_fields", {})
    settings = wandb.Settings(**{k: v for k, v in _QUIET.items() if k in known})
    summary = run_summary(run_dir)
    run_id = (summary.run_id if summary is not None else "") or run_dir.name
    project = project or os.environ.get("WANDB_PROJECT") or PROJECT
    written = []
    for job in iter_jobs(run_dir):
        results = job.results
        run = wandb.init(project=project, group=run_id, job_type="job", id=_wandb_id(run_id, job.job_id,
                                                                                        results.attempt),
                         name=f"{results.spec.task} x {results.spec.trainer} s{results.spec.seed}",
                         config=job.params, tags=[str(results.status), results.spec.mode], settings=settings)
        try:
            _log_job(wandb, run, job)
        finally:
            run.finish(exit_code=0 if str(results.status) in COMPLETE else 1)
        written.append(run.id)
    written.append(_export_run(wandb, settings, project, run_id, run_dir))
    return written


def _wandb_id(*parts: object) -> str:
    """A W&B run id (letters, digits, ``-`` and ``_``)."""
    return re.sub(r"[^A-Za-z0-9_-]", "-", "-".join(str(p) for p in parts))[:128]


def _log_job(wandb: Any, run: Any, job: JobExport) -> None:
    run.define_metric("step")
    for key in (*CURVE_METRICS, "best_score", "score"):
        run.define_metric(key, step_metric="step")
    for point in job.curve:
        run.log({key: point[key] for key in ("step", *CURVE_METRICS) if key in point})
    run.summary.update(job.final_metrics)
    rows = transcript_rows(job)
    if rows:
        run.log({"transcript": wandb.Table(columns=TRANSCRIPT_COLUMNS, data=rows)})


def transcript_rows(job: JobExport) -> list[list[Any]]:
    """The job's first :data:`TRANSCRIPT_ROWS` calls as table rows: the last message sent and the
    first answer, each cut to :data:`TEXT_CHARS`."""
    try:
        entries = job.job.read_transcript()[:TRANSCRIPT_ROWS]
    except StoreError:
        return []
    rows = []
    for entry in entries:
        prompt = entry.messages[-1].content if entry.messages else ""
        answer = entry.answers[0] if entry.answers else ""
        outcome = entry.error or (f"unanswered: {entry.unanswered}" if entry.unanswered else entry.omitted or "ok")
        rows.append([entry.call, entry.step, entry.role, entry.phase, entry.caller or "", entry.model,
                     _text(prompt), _text(answer), entry.prompt_tokens, entry.completion_tokens, _text(outcome)])
    return rows


def _text(text: str) -> str:
    text = mask_secrets(text)
    return text if len(text) <= TEXT_CHARS else text[:TEXT_CHARS] + f" [... {len(text) - TEXT_CHARS:,} more]"


def _export_run(wandb: Any, settings: Any, project: str, run_id: str, run_dir: Path) -> str:
    """The run's own W&B run: its config, summary metrics and leaderboard."""
    summary = run_summary(run_dir)
    run = wandb.init(project=project, group=run_id, job_type="run", id=_wandb_id(run_id, "run"), name=run_id,
                     config=run_params(run_dir), settings=settings)
    try:
        if summary is not None:
            metrics: dict[str, float] = {"jobs_total": float(summary.total_jobs), "llm_calls": float(summary.llm_calls),
                                         "tokens_total": float(summary.token_totals.total),
                                         "cost_usd": float(summary.cost_usd)}
            metrics.update({f"jobs_{k}": float(v) for k, v in summary.counts.items()})
            run.summary.update(metrics)
        try:
            leaderboard = RunStore(run_dir).read_leaderboard_rows() or []
        except StoreError:
            leaderboard = []
        if leaderboard:
            columns = list(leaderboard[0])
            run.log({"leaderboard": wandb.Table(columns=columns, data=[[_cell(row.get(c)) for c in columns]
                                                                        for row in leaderboard])})
    finally:
        run.finish()
    return str(run.id)


def _cell(value: Any) -> Any:
    return mask_secrets(value) if isinstance(value, str) else value

"""TensorBoard: event files per job under ``jobs/<id>/tb/``, written from ``curve.csv``.

TensorBoard's x axis is a step, so besides the per-step scalars (``curve/<metric>``) the best
score is also written against LLM calls and tokens used as the step (``best_score_by/<axis>``):
the anytime curves the benchmark is about, without a custom plugin.  Re-exporting replaces the
job's ``tb/`` directory, so a resumed run never holds stale events.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from trace_bench.trackers.source import CURVE_METRICS, iter_jobs

AXES = ("llm_calls", "tokens")


def export_tensorboard(run_dir: Path) -> list[Path]:
    """Write every finished job's scalars; returns the ``tb/`` directories written."""
    from tensorboardX import SummaryWriter

    written = []
    for job in iter_jobs(run_dir):
        logdir = job.job.tensorboard_dir
        shutil.rmtree(logdir, ignore_errors=True)
        writer = SummaryWriter(logdir=str(logdir))
        try:
            for point in job.curve:
                step = int(point["step"])
                for key in CURVE_METRICS:
                    if key in point:
                        writer.add_scalar(f"curve/{key}", point[key], global_step=step)
                if "best_score" in point:
                    for axis in AXES:
                        if axis in point:
                            writer.add_scalar(f"best_score_by/{axis}", point["best_score"],
                                              global_step=int(point[axis]))
            last = int(job.curve[-1]["step"]) if job.curve else 0
            for key, value in job.final_metrics.items():
                writer.add_scalar(f"final/{key}", value, global_step=last)
            writer.add_text("job", json.dumps(job.params, indent=2, sort_keys=True), global_step=0)
        finally:
            writer.close()
        written.append(logdir)
    return written

"""Export a finished (or interrupted) run to experiment trackers: MLflow, TensorBoard and W&B.

Trackers read the run directory after the fact, so they work the same for a run that just ended,
a resumed run, or one exported days later (``export_run(run_dir, ["mlflow"])``).  A tracker is a
convenience, never part of the record: every error is caught, written to the run's
``events.jsonl`` as a ``tracker_warning`` event and reported as a warning, and the run's outcome
does not change.  Tracker packages are imported only when a tracker is used.
"""

from __future__ import annotations

import os
import sys
import traceback
from collections.abc import Callable, Iterable
from pathlib import Path

from trace_bench._util.masking import mask_secrets

KNOWN = ("mlflow", "tensorboard", "wandb")


def active_trackers(config_trackers: Iterable[str] | None = None) -> list[str]:
    """The trackers a run exports to: the config's ``trackers`` plus MLflow when
    ``MLFLOW_TRACKING_URI`` is set (the original Trace-Bench's switch)."""
    names = [str(name).lower() for name in (config_trackers or [])]
    if os.environ.get("MLFLOW_TRACKING_URI") and "mlflow" not in names:
        names.append("mlflow")
    return [name for name in KNOWN if name in names]


def _exporter(name: str) -> Callable[[Path], object]:
    if name == "mlflow":
        from trace_bench.trackers.mlflow_export import export_mlflow

        return export_mlflow
    if name == "tensorboard":
        from trace_bench.trackers.tensorboard_export import export_tensorboard

        return export_tensorboard
    if name == "wandb":
        from trace_bench.trackers.wandb_export import export_wandb

        return export_wandb
    raise ValueError(f"unknown tracker {name!r}; known: {', '.join(KNOWN)}")


def export_run(run_dir: str | Path, trackers: Iterable[str]) -> None:
    """Export ``run_dir`` to each tracker; never raises (failures become ``tracker_warning`` events)."""
    root = Path(run_dir)
    for name in trackers:
        try:
            _exporter(str(name).lower())(root)
        except Exception as exc:  # noqa: BLE001 - a tracker must never abort or fail a run
            warn(root, str(name), exc)


def warn(run_dir: Path, tracker: str, exc: BaseException) -> None:
    """Record a tracker failure in the run's events and on stderr (masked)."""
    message = mask_secrets(f"{type(exc).__name__}: {exc}")
    print(f"trace-bench: warning: tracker {tracker} failed for {run_dir.name}: {message}", file=sys.stderr)
    from trace_bench.store.models import TrackerWarning
    from trace_bench.store.run_store import RunStore

    try:
        RunStore(run_dir).append_event(TrackerWarning(tracker=tracker, error=message,
                                                      traceback=mask_secrets(traceback.format_exc(limit=5))))
    except OSError:
        pass


__all__ = ["KNOWN", "active_trackers", "export_run", "warn"]

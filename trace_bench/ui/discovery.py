"""Find the runs of a runs directory and describe them for pickers and tables.

Runs are found and read through the store (``RunStore.find``: a directory with
``meta/manifest.json`` or ``meta/config.snapshot.yaml``; the runs directory itself may be a run).
A run that cannot be read still appears (state ``unreadable`` with the reason), so a broken run
is visible instead of silently missing.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trace_bench.store.live import INTERRUPTED, RunProgress
from trace_bench.store.models import Manifest, StoreError, Summary
from trace_bench.store.run_store import RunStore
from trace_bench.ui.readers import problem_of
from trace_bench.ui.run_records import RunRecord, discover_runs, load_job_details, load_run_summary

__all__ = ["RunInfo", "RunRecord", "discover_runs", "is_run_dir", "job_choices", "job_entries", "latest_statuses",
           "list_runs", "load_job_details", "load_run_summary", "run_choices", "run_info", "run_state"]


@dataclass
class RunInfo:
    run_id: str
    run_dir: Path
    created: str = ""
    total_jobs: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    state: str = "incomplete"
    problem: str | None = None
    validated_only: bool = False  # a `validate --strict` manifest: checked, never run

    @property
    def finished_jobs(self) -> int:
        return sum(self.counts.values())

    @property
    def label(self) -> str:
        counts = " ".join(f"{k}={v}" for k, v in sorted(self.counts.items()))
        if not counts and self.state != "running":
            counts = "no results yet"
        parts = [self.run_id, self.created[:19].replace("T", " "), f"{self.total_jobs} jobs", counts, self.state]
        return " · ".join(part for part in parts if part)

    def row(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "created": self.created[:19].replace("T", " "), "jobs": self.total_jobs,
                "finished": self.finished_jobs, "state": self.state,
                "counts": " ".join(f"{k}={v}" for k, v in sorted(self.counts.items())),
                "problem": self.problem or ""}


def is_run_dir(path: Path) -> bool:
    return RunStore.is_run(path)


def run_state(run_dir: Path) -> str:
    """``finished``, ``interrupted`` or ``incomplete`` (running now, or killed) from the run's events;
    :func:`list_runs` says ``running`` for the incomplete runs it is told are being written."""
    state = RunProgress.of(RunStore(run_dir).events()).state
    return state if state in ("finished", INTERRUPTED) else "incomplete"


def _manifest(store: RunStore, *, entries: bool = True) -> tuple[Manifest | None, str | None]:
    """The manifest; with ``entries=False`` its head only (a listing needs no job entries, and a
    large run has 100,000 of them), unless an old manifest does not record its job count."""
    try:
        manifest = store.read_manifest() if entries else store.read_manifest_head()
        if manifest is not None and not entries and not manifest.total_jobs:
            manifest = store.read_manifest()
    except StoreError as exc:
        return None, problem_of(exc, store.manifest_path)
    return manifest, None if manifest is not None else "manifest.json: not written yet"


def _summary(store: RunStore) -> tuple[Summary | None, str | None]:
    try:
        return store.read_summary(), None
    except StoreError as exc:
        return None, problem_of(exc, store.summary_path)


def run_info(run_dir: Path) -> RunInfo:
    store = RunStore(run_dir)
    info = RunInfo(run_id=store.run_id, run_dir=store.root)
    manifest, info.problem = _manifest(store, entries=False)
    if manifest is not None:
        info.run_id = manifest.run_id or store.run_id
        info.created = manifest.created_at
        info.total_jobs = manifest.total_jobs or len(manifest.jobs)
        info.validated_only = manifest.validated_only
    summary, summary_problem = _summary(store)
    if summary is not None:
        info.counts = dict(summary.counts)
    elif summary_problem:
        info.problem = info.problem or summary_problem
    info.state = "unreadable" if info.problem and not info.total_jobs else run_state(store.root)
    if not info.created:
        info.created = _mtime_iso(store.root)
    return info


def list_runs(runs_dir: str | Path, running: Collection[Path] = ()) -> list[RunInfo]:
    """Runs newest first (by creation time, then directory name); an incomplete run whose directory
    is in ``running`` (a live launch of this server writes it) has state ``running``.  What
    ``validate --strict`` left (a manifest of a run that never ran) is not a run: left out."""
    live = {Path(p).resolve() for p in running}
    runs = [info for info in (run_info(store.root) for store in RunStore.find(runs_dir)) if not info.validated_only]
    for info in runs:
        if info.state == "incomplete" and info.run_dir.resolve() in live:
            info.state = "running"
    return sorted(runs, key=lambda r: (r.created, r.run_dir.name), reverse=True)


def run_choices(runs_dir: str | Path, running: Collection[Path] = ()) -> list[tuple[str, str]]:
    """(label, run_dir) pairs for a dropdown, newest first."""
    return [(info.label, str(info.run_dir)) for info in list_runs(runs_dir, running)]


def job_entries(run_dir: Path) -> list[dict[str, Any]]:
    """The run's jobs (from the manifest, in matrix order) with their latest known status."""
    store = RunStore(run_dir)
    manifest, _ = _manifest(store)
    if manifest is not None and manifest.jobs:
        entries = [entry.model_dump(mode="json") for entry in manifest.jobs]
    else:  # no manifest: fall back to the job directories
        entries = [{"job_id": job_id} for job_id in store.job_ids()]
    statuses = latest_statuses(store.root)
    return [{**entry, "status": statuses.get(entry["job_id"], entry.get("status") or "pending")} for entry in entries]


def latest_statuses(run_dir: Path) -> dict[str, str]:
    """Each job's latest state from the run's events: ``running`` between its start and finish."""
    return RunProgress.of(RunStore(run_dir).events()).jobs


def job_choices(run_dir: str | Path | None) -> list[tuple[str, str]]:
    if not run_dir:
        return []
    return [(f"{e['job_id']} · {e.get('task', '?')} × {e.get('trainer', '?')} ({e.get('params_label', '')})"
             f" seed={e.get('seed', '?')} · {e['status']}", e["job_id"]) for e in job_entries(Path(run_dir))]


def _mtime_iso(path: Path) -> str:
    from datetime import datetime, timezone

    try:
        stamp = path.stat().st_mtime
    except OSError:
        return ""
    return datetime.fromtimestamp(stamp, tz=timezone.utc).isoformat(timespec="seconds")

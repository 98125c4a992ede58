"""Find the runs of a runs directory and describe them for pickers and tables.

A directory is a run when it has ``meta/manifest.json`` or ``meta/config.snapshot.yaml``; the
runs directory itself may be a run.  A run that cannot be read still appears (state
``unreadable`` with the reason), so a broken run is visible instead of silently missing.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trace_bench.store.events import read_events
from trace_bench.ui.readers import read_json

SUCCESS = ("ok", "budget_exhausted")


@dataclass
class RunInfo:
    run_id: str
    run_dir: Path
    created: str = ""
    total_jobs: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    state: str = "incomplete"
    problem: str | None = None

    @property
    def finished_jobs(self) -> int:
        return sum(self.counts.values())

    @property
    def label(self) -> str:
        counts = " ".join(f"{k}={v}" for k, v in sorted(self.counts.items())) or "no results yet"
        return f"{self.run_id} · {self.created[:19].replace('T', ' ')} · {self.total_jobs} jobs · {counts}" \
               f" · {self.state}"

    def row(self) -> dict[str, Any]:
        return {"run_id": self.run_id, "created": self.created[:19].replace("T", " "), "jobs": self.total_jobs,
                "finished": self.finished_jobs, "state": self.state,
                "counts": " ".join(f"{k}={v}" for k, v in sorted(self.counts.items())),
                "problem": self.problem or ""}


def is_run_dir(path: Path) -> bool:
    meta = path / "meta"
    return (meta / "manifest.json").exists() or (meta / "config.snapshot.yaml").exists()


def run_state(run_dir: Path) -> str:
    """``finished``, ``interrupted`` or ``incomplete`` (running now, or killed) from the run's events."""
    state = "incomplete"
    for event in read_events(run_dir / "events.jsonl"):
        kind = event.get("type")
        if kind == "run_started":
            state = "incomplete"
        elif kind == "run_finished":
            stopped = bool(event.get("interrupted")) or bool(event.get("not_run"))
            state = "interrupted" if stopped else "finished"
    return state


def run_info(run_dir: Path) -> RunInfo:
    run_dir = Path(run_dir)
    info = RunInfo(run_id=run_dir.name, run_dir=run_dir)
    manifest, problem = read_json(run_dir / "meta" / "manifest.json")
    if isinstance(manifest, dict):
        info.run_id = str(manifest.get("run_id") or run_dir.name)
        info.created = str(manifest.get("created_at") or "")
        jobs = manifest.get("jobs")
        info.total_jobs = int(manifest.get("total_jobs") or (len(jobs) if isinstance(jobs, list) else 0))
    else:
        info.problem = problem if manifest is None else "manifest.json: not a JSON object"
    summary, summary_problem = read_json(run_dir / "summary.json")
    if isinstance(summary, dict) and isinstance(summary.get("counts"), dict):
        info.counts = {str(k): int(v) for k, v in summary["counts"].items() if isinstance(v, (int, float))}
    elif summary_problem and "not written yet" not in summary_problem:
        info.problem = info.problem or summary_problem
    info.state = "unreadable" if info.problem and not info.total_jobs else run_state(run_dir)
    if not info.created:
        info.created = _mtime_iso(run_dir)
    return info


def list_runs(runs_dir: str | Path) -> list[RunInfo]:
    """Runs newest first (by creation time, then directory name)."""
    root = Path(runs_dir)
    if not root.is_dir():
        return []
    if is_run_dir(root):
        return [run_info(root)]
    runs = [run_info(child) for child in root.iterdir()
            if child.is_dir() and not child.name.startswith(".") and is_run_dir(child)]
    return sorted(runs, key=lambda r: (r.created, r.run_dir.name), reverse=True)


def run_choices(runs_dir: str | Path) -> list[tuple[str, str]]:
    """(label, run_dir) pairs for a dropdown."""
    return [(info.label, str(info.run_dir)) for info in list_runs(runs_dir)]


def job_entries(run_dir: Path) -> list[dict[str, Any]]:
    """The run's jobs (from the manifest, in matrix order) with their latest known status."""
    manifest, _ = read_json(Path(run_dir) / "meta" / "manifest.json")
    entries = manifest.get("jobs") if isinstance(manifest, dict) else None
    if not isinstance(entries, list):  # no manifest: fall back to the job directories
        jobs_dir = Path(run_dir) / "jobs"
        names = sorted(p.name for p in jobs_dir.iterdir() if p.is_dir()) if jobs_dir.is_dir() else []
        entries = [{"job_id": name} for name in names]
    statuses = latest_statuses(Path(run_dir))
    out = []
    for entry in entries:
        if not isinstance(entry, dict) or "job_id" not in entry:
            continue
        job_id = str(entry["job_id"])
        out.append({**entry, "job_id": job_id, "status": statuses.get(job_id, entry.get("status") or "pending")})
    return out


def latest_statuses(run_dir: Path) -> dict[str, str]:
    """Each job's latest state from the run's events: ``running`` between its start and finish."""
    statuses: dict[str, str] = {}
    for event in read_events(run_dir / "events.jsonl"):
        kind, job_id = event.get("type"), event.get("job_id")
        if kind == "job_started" and job_id:
            statuses[str(job_id)] = "running"
        elif kind == "job_finished" and job_id:
            statuses[str(job_id)] = str(event.get("status") or "finished")
        elif kind == "run_finished":
            for key, value in list(statuses.items()):
                if value == "running":
                    statuses[key] = "interrupted"
    return statuses


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

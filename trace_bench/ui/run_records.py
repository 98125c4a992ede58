"""The original Trace-Bench's run-discovery API (``trace_bench.ui.discovery.discover_runs``,
``load_run_summary``, ``load_job_details``), for notebooks and scripts written against it.

It reads runs written by the original too, whose files our typed records do not describe, so
everything here is read raw (through the store's readers) and a missing or unreadable file gives
an empty value instead of an error.  The UI itself uses :mod:`trace_bench.ui.discovery`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trace_bench.store import reading
from trace_bench.store.models import StoreError
from trace_bench.store.run_store import RunStore
from trace_bench.ui.readers import masked, read_csv_rows, read_json

#: how deep below the runs directory runs are looked for (the original's depth)
SEARCH_DEPTH = 4


@dataclass
class RunRecord:
    run_id: str
    run_dir: Path
    label: str = field(default="", metadata={"doc": "the run's path relative to the runs directory"})
    generated_at: str = ""
    total_jobs: int = 0
    counts: dict[str, int] = field(default_factory=dict)

    @property
    def failure_rate(self) -> float:
        total = sum(self.counts.values())
        return self.counts.get("failed", 0) / total if total else 0.0


def _mapping(data: Any) -> dict[str, Any]:
    return data if isinstance(data, dict) else {}


def discover_runs(runs_dir: str | Path) -> list[RunRecord]:
    """The runs under ``runs_dir`` (down to four levels, or ``runs_dir`` itself when it is a run),
    most recently modified first."""
    root = Path(runs_dir)
    records = []
    for store in RunStore.find(root, depth=SEARCH_DEPTH):
        manifest = _mapping(read_json(store.manifest_path)[0])
        summary = _mapping(read_json(store.summary_path)[0])
        label = store.root.name if store.root == root else str(store.root.relative_to(root))
        counts = {str(k): int(v) for k, v in _mapping(summary.get("counts")).items() if isinstance(v, int)}
        records.append(RunRecord(run_id=store.root.name, run_dir=store.root, label=label,
                                 generated_at=str(manifest.get("generated_at") or ""),
                                 total_jobs=int(summary.get("total_jobs") or 0), counts=counts))
    return sorted(records, key=lambda r: _mtime(r.run_dir), reverse=True)


def load_run_summary(run_dir: str | Path) -> dict[str, Any]:
    """``summary`` (summary.json), ``manifest``, ``results_rows`` (results.csv as dicts) and
    ``leaderboard_rows``; empty when a file is missing."""
    store = RunStore(run_dir)
    return {"summary": _mapping(read_json(store.summary_path)[0]),
            "manifest": _mapping(read_json(store.manifest_path)[0]),
            "results_rows": _rows(store.results_csv_path), "leaderboard_rows": _rows(store.leaderboard_path)}


def load_job_details(run_dir: str | Path, job_id: str) -> dict[str, Any]:
    """A job's ``job_meta`` and ``results`` (dicts) and the text of its ``events`` and ``stdout``;
    empty when a file is missing."""
    job = RunStore(run_dir).job(job_id)
    return {"job_id": job_id, "job_dir": str(job.root), "job_meta": _mapping(read_json(job.meta_path)[0]),
            "results": _mapping(read_json(job.results_path)[0]), "events": _text(job.events_path),
            "stdout": _text(job.stdout_path)}


def _rows(path: Path) -> list[dict[str, str]]:
    return read_csv_rows(path)[0]


def _text(path: Path) -> str:
    try:
        text = reading.read_text(path)
    except StoreError:
        return ""
    return "" if text is None else masked(text)


def _mtime(path: Path) -> float:
    try:
        return path.stat().st_mtime
    except OSError:
        return 0.0

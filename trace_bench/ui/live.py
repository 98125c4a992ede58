"""Live progress of a run, computed from what the driver and its jobs append to disk.

The driver writes ``run_started``/``job_started``/``job_finished``/``run_finished`` to the run's
``events.jsonl``; each job appends ``llm_call`` events to its own log and writes ``results.json``
when it ends.  A :class:`ProgressReader` follows those logs through the store (which keeps the
read offsets and holds back a torn last line) and keeps per-job totals between calls, so a timer
that refreshes every second reads only the bytes appended since the last tick.
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from trace_bench.store.events import LogFollower
from trace_bench.store.models import Event, JobEnded, JobSubmitted, LLMCall, RunFinished, RunStarted
from trace_bench.store.reading import file_stamp
from trace_bench.store.run_store import RunStore
from trace_bench.store.status import FAILED


@dataclass
class RunSnapshot:
    """A running (or ended) run's counters at one instant, as the progress bar shows them."""

    run_id: str
    total: int = 0
    done: int = 0
    running: int = 0
    failed: int = 0
    interrupted: int = 0
    counts: dict[str, int] = field(default_factory=dict)
    tokens: int = 0
    usd: float = 0.0
    state: str = "starting"
    elapsed_s: float = 0.0
    eta_s: float | None = None

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0


@dataclass
class _Job:
    status: str = "running"
    tail: LogFollower | None = None
    tokens: int = 0
    usd: float = 0.0
    result_stamp: Any = None


class ProgressReader:
    """Follows one run directory; call :meth:`read` as often as the display refreshes."""

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        self._store = RunStore(self.run_dir)
        self._run_tail = self._store.follow_events()
        self._jobs: dict[str, _Job] = {}
        self._total = 0
        self._state = "starting"
        self._session_start: float | None = None
        self._session_finished = 0

    def read(self) -> RunSnapshot:
        for event in self._run_tail.new():
            self._apply(event)
        progress = RunSnapshot(run_id=self.run_dir.name, total=self._total, state=self._state)
        for job_id, job in self._jobs.items():
            self._update_spend(job_id, job)
            progress.counts[job.status] = progress.counts.get(job.status, 0) + 1
            progress.tokens += job.tokens
            progress.usd += job.usd
        progress.running = progress.counts.get("running", 0)
        progress.interrupted = progress.counts.get("interrupted", 0)
        progress.failed = sum(v for k, v in progress.counts.items() if k in FAILED)
        progress.done = sum(v for k, v in progress.counts.items() if k not in ("running", "interrupted"))
        if self._session_start is not None:
            progress.elapsed_s = max(0.0, time.time() - self._session_start)
            remaining = max(0, progress.total - progress.done)
            if self._state == "running" and self._session_finished and remaining:
                progress.eta_s = progress.elapsed_s / self._session_finished * remaining
        return progress

    def _apply(self, event: Event) -> None:
        if isinstance(event, RunStarted):
            self._total = event.total_jobs
            self._state = "running"
            self._session_start = _epoch(event.ts) or time.time()
            self._session_finished = 0
        elif isinstance(event, JobSubmitted) and event.job_id:  # a new attempt starts from a cleared job dir
            self._jobs[event.job_id] = _Job(tail=self._store.follow_job_events(event.job_id))
        elif isinstance(event, JobEnded) and event.job_id:
            self._jobs.setdefault(event.job_id, _Job()).status = str(event.status)
            self._session_finished += 1
        elif isinstance(event, RunFinished):
            self._state = "interrupted" if event.interrupted or event.not_run else "finished"
            for job in self._jobs.values():
                if job.status == "running":
                    job.status = "interrupted"

    def _update_spend(self, job_id: str, job: _Job) -> None:
        """Finished jobs: the totals in results.json; running jobs: the sum of their llm_call events."""
        store = self._store.job(job_id)
        if job.status != "running":
            stamp = file_stamp(store.results_path)
            if stamp != job.result_stamp:
                job.result_stamp = stamp
                record = store.result_or_none()
                if record is not None:
                    job.tokens = record.total_tokens
                    job.usd = record.cost_usd
            return
        if job.tail is None:
            return
        for event in job.tail.new():
            if isinstance(event, LLMCall):
                job.tokens += event.total_tokens
                job.usd += event.cost_usd


def _epoch(stamp: Any) -> float | None:
    if not isinstance(stamp, str):
        return None
    try:
        return datetime.fromisoformat(stamp.replace("Z", "+00:00")).timestamp()
    except ValueError:
        return None


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 \
        else f"{seconds // 60}:{seconds % 60:02d}"


def progress_html(progress: RunSnapshot | None, note: str = "") -> str:
    """The progress bar and counters (plain HTML with stable ids, which the browser tests read)."""
    if progress is None:
        body = '<div id="tb-progress-text">no run selected</div>'
        return f'<div id="tb-progress" data-percent="0">{body}{_note(note)}</div>'
    percent = progress.percent
    colour = "#c0392b" if progress.failed else ("#e67e22" if progress.state == "interrupted" else "#2e86de")
    bar = (f'<div style="background:#eee;border-radius:4px;height:18px;width:100%">'
           f'<div id="tb-progress-bar" style="background:{colour};height:18px;border-radius:4px;'
           f'width:{percent}%"></div></div>')
    text = (f"{progress.done}/{progress.total} jobs · {percent} % · running {progress.running} · "
            f"failed {progress.failed} · interrupted {progress.interrupted} · tokens {progress.tokens:,} · "
            f"USD {progress.usd:.4f} · elapsed {_duration(progress.elapsed_s)} · ETA {_duration(progress.eta_s)}")
    return (f'<div id="tb-progress" data-percent="{percent}" data-state="{html.escape(progress.state)}" '
            f'data-done="{progress.done}" data-total="{progress.total}">'
            f'<div><b>{html.escape(progress.run_id)}</b> · <span id="tb-run-state">{html.escape(progress.state)}'
            f'</span></div>{bar}<div id="tb-progress-text">{html.escape(text)}</div>{_note(note)}</div>')


def _note(note: str) -> str:
    return f'<div id="tb-progress-note" style="color:#555">{html.escape(note)}</div>' if note else ""

"""Live progress of a run, computed from what the driver and its jobs append to disk.

The driver writes ``run_started``/``job_started``/``job_finished``/``run_finished`` to the run's
``events.jsonl``; each job appends ``llm_call`` events to its own log and writes ``results.json``
when it ends.  A :class:`ProgressReader` follows those logs through the store (which keeps the
read offsets and holds back a torn last line) and folds them with the store's one fold
(``store.live``: the console and the records of killed jobs use it too), so a timer that
refreshes every second reads only the bytes appended since the last tick.
"""

from __future__ import annotations

import html
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from trace_bench.store.events import LogFollower
from trace_bench.store.live import INTERRUPTED, RUNNING, JobProgress, RunProgress
from trace_bench.store.models import JobSubmitted, StoreError
from trace_bench.store.reading import file_stamp
from trace_bench.store.run_store import RunStore


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
    stub: bool = False  # stub mode: the tokens are the stub's and USD is 0, and the bar says so
    workers: int = 0  # the job processes at a time the driver used (0 before it started)

    @property
    def percent(self) -> int:
        return int(100 * self.done / self.total) if self.total else 0


@dataclass
class _Job:
    tail: LogFollower | None = None
    progress: JobProgress = field(default_factory=JobProgress)
    tokens: int = 0
    usd: float = 0.0
    result_stamp: Any = None


class ProgressReader:
    """Follows one run directory; call :meth:`read` as often as the display refreshes."""

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        self._store = RunStore(self.run_dir)
        self._run_tail = self._store.follow_events()
        self._run = RunProgress()
        self._jobs: dict[str, _Job] = {}
        self._mode: str | None = None

    def read(self) -> RunSnapshot:
        for event in self._run_tail.new():
            self._run.apply(event)
            if isinstance(event, JobSubmitted) and event.job_id:  # a new attempt starts from a cleared job dir
                self._jobs[event.job_id] = _Job(tail=self._store.follow_job_events(event.job_id))
        run = self._run
        progress = RunSnapshot(run_id=self.run_dir.name, total=run.total, state=run.state, counts=run.counts(),
                               stub=self._run_mode() == "stub", workers=run.workers)
        for job_id, status in run.jobs.items():
            job = self._jobs.setdefault(job_id, _Job())
            self._update_spend(job_id, job, status)
            progress.tokens += job.tokens
            progress.usd += job.usd
        progress.running = progress.counts.get(RUNNING, 0)
        progress.interrupted = progress.counts.get(INTERRUPTED, 0)
        progress.failed = run.failed
        progress.done = sum(v for k, v in progress.counts.items() if k not in (RUNNING, INTERRUPTED))
        if run.state != "starting":
            end = _epoch(run.finished_ts) or time.time()  # an ended run's clock stops at its end
            progress.elapsed_s = max(0.0, end - (_epoch(run.started_ts) or end))
            remaining = max(0, progress.total - progress.done)
            if run.state == "running" and run.finished_this_session and remaining:
                progress.eta_s = progress.elapsed_s / run.finished_this_session * remaining
        return progress

    def _run_mode(self) -> str | None:
        """The run's mode, from its manifest's head (read until found: the driver writes it first)."""
        if self._mode is None:
            try:
                head = self._store.read_manifest_head()
            except StoreError:
                head = None
            self._mode = head.mode if head is not None else None
        return self._mode

    def _update_spend(self, job_id: str, job: _Job, status: str) -> None:
        """Finished jobs: the totals in results.json; running jobs: the fold of their events (the
        trainer's calls, as a record counts them)."""
        store = self._store.job(job_id)
        if status != RUNNING:
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
            job.progress.apply(event)
        job.tokens, job.usd = job.progress.train.total_tokens, job.progress.train.cost_usd


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
    workers = f" · {progress.workers} worker{'s' if progress.workers != 1 else ''}" if progress.workers else ""
    text = (f"{progress.done}/{progress.total} jobs{workers} · {percent} % · running {progress.running} · "
            f"failed {progress.failed} · interrupted {progress.interrupted} · tokens {progress.tokens:,} · "
            f"USD {progress.usd:.4f} · elapsed {_duration(progress.elapsed_s)} · ETA {_duration(progress.eta_s)}")
    if progress.stub:
        text += " · stub mode: the tokens are the stub's answers and USD is 0"
    return (f'<div id="tb-progress" data-percent="{percent}" data-state="{html.escape(progress.state)}" '
            f'data-done="{progress.done}" data-total="{progress.total}" data-workers="{progress.workers}">'
            f'<div><b>{html.escape(progress.run_id)}</b> · <span id="tb-run-state">{html.escape(progress.state)}'
            f'</span></div>{bar}<div id="tb-progress-text">{html.escape(text)}</div>{_note(note)}</div>')


def _note(note: str) -> str:
    return f'<div id="tb-progress-note" style="color:#555">{html.escape(note)}</div>' if note else ""

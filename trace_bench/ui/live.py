"""Live progress of a run, computed from what the driver and its jobs append to disk.

The driver writes ``run_started``/``job_started``/``job_finished``/``run_finished`` to the run's
``events.jsonl``; each job appends ``llm_call`` events to its own log and writes ``results.json``
when it ends.  A :class:`ProgressReader` keeps read offsets and per-job totals between calls, so
a timer that refreshes every second reads only the bytes appended since the last tick.
"""

from __future__ import annotations

import html
import json
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

from trace_bench.ui.readers import file_stamp, read_json

FAILED = frozenset({"failed", "timeout", "oom", "infra_error"})


@dataclass
class Progress:
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


class _Tail:
    """Incremental reader of one JSON-lines file (keeps the offset and a torn last line)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0
        self.partial = ""

    def new_events(self) -> list[dict[str, Any]]:
        try:
            with open(self.path, encoding="utf-8", errors="replace") as handle:
                handle.seek(self.offset)
                data = handle.read()
                self.offset = handle.tell()
        except OSError:
            return []
        lines = (self.partial + data).split("\n")
        self.partial = lines.pop()  # "" when the data ended with a newline
        events = []
        for line in lines:
            try:
                event = json.loads(line)
            except ValueError:
                continue
            if isinstance(event, dict):
                events.append(event)
        return events


@dataclass
class _Job:
    status: str = "running"
    tail: _Tail | None = None
    tokens: int = 0
    usd: float = 0.0
    result_stamp: Any = None


class ProgressReader:
    """Follows one run directory; call :meth:`read` as often as the display refreshes."""

    def __init__(self, run_dir: str | Path) -> None:
        self.run_dir = Path(run_dir)
        self._run_tail = _Tail(self.run_dir / "events.jsonl")
        self._jobs: dict[str, _Job] = {}
        self._total = 0
        self._state = "starting"
        self._session_start: float | None = None
        self._session_finished = 0

    def read(self) -> Progress:
        for event in self._run_tail.new_events():
            self._apply(event)
        progress = Progress(run_id=self.run_dir.name, total=self._total, state=self._state)
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

    def _apply(self, event: dict[str, Any]) -> None:
        kind, job_id = event.get("type"), event.get("job_id")
        if kind == "run_started":
            self._total = int(event.get("total_jobs") or 0)
            self._state = "running"
            self._session_start = _epoch(event.get("ts")) or time.time()
            self._session_finished = 0
        elif kind == "job_started" and job_id:  # a new attempt starts from a cleared job directory
            self._jobs[str(job_id)] = _Job(tail=_Tail(self.run_dir / "jobs" / str(job_id) / "events.jsonl"))
        elif kind == "job_finished" and job_id:
            self._jobs.setdefault(str(job_id), _Job()).status = str(event.get("status") or "finished")
            self._session_finished += 1
        elif kind == "run_finished":
            self._state = "interrupted" if event.get("interrupted") or event.get("not_run") else "finished"
            for job in self._jobs.values():
                if job.status == "running":
                    job.status = "interrupted"

    def _update_spend(self, job_id: str, job: _Job) -> None:
        """Finished jobs: the totals in results.json; running jobs: the sum of their llm_call events."""
        results = self.run_dir / "jobs" / job_id / "results.json"
        if job.status != "running":
            stamp = file_stamp(results)
            if stamp != job.result_stamp:
                job.result_stamp = stamp
                data, _ = read_json(results)
                if isinstance(data, dict):
                    job.tokens = int(data.get("total_tokens") or 0)
                    job.usd = float(data.get("cost_usd") or 0.0)
            return
        if job.tail is None:
            return
        for event in job.tail.new_events():
            if event.get("type") == "llm_call":
                job.tokens += int(event.get("total_tokens") or 0)
                job.usd += float(event.get("cost_usd") or 0.0)


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


def progress_html(progress: Progress | None, note: str = "") -> str:
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

"""Console progress for ``trace-bench run``.

Not a terminal (a pipe, a file, CI): one plain line per finished job, a format users grep and
pipe, so it does not change.  A terminal with ``rich`` installed: the same lines scroll above a
live panel with jobs done/running/failed, a progress bar, tokens, USD, ETA and the current step of
each running job (its ``events.jsonl`` followed and folded by ``store.live``, as the UI does).  ``rich`` is optional and imported
only when the live panel is used.

The runner drives it with ``started`` (a job process was submitted), ``finished`` (its record),
``line`` (a message) and ``close`` (restore the terminal); it may also set ``done`` directly for
jobs that a resumed run reuses.
"""

from __future__ import annotations

import atexit
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from trace_bench._util.errors import shorten
from trace_bench._util.masking import mask_secrets
from trace_bench.config.models import BudgetConfig
from trace_bench.store.events import LogFollower
from trace_bench.store.job_store import JobStore
from trace_bench.store.live import JobProgress
from trace_bench.store.models import JobResult, Step
from trace_bench.store.status import FAILED, Status


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


def _duration(seconds: float | None) -> str:
    if seconds is None:
        return "-"
    seconds = int(seconds)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"


@dataclass
class _RunningJob:
    task: str
    trainer: str
    job_dir: Path | None
    started: float
    progress: JobProgress = field(default_factory=JobProgress)
    follower: LogFollower | None = None

    def latest_step(self) -> Step | None:
        """The job's latest step: its events appended since the last look, folded (the panel's thread)."""
        if self.job_dir is not None:
            if self.follower is None:
                self.follower = JobStore(self.job_dir).follow_events()
            for event in self.follower.new():
                self.progress.apply(event)
        return self.progress.step


def budget_text(budget: BudgetConfig) -> str:
    """``": llm_calls=5, usd=0.5"`` for a job's budget (its set limits), or ``""``."""
    limits = ", ".join(f"{key}={value:g}" if isinstance(value, float) else f"{key}={value}"
                       for key, value in budget.model_dump().items() if value is not None)
    return f": {limits}" if limits else ""


def last_step(job_dir: Path | None) -> dict[str, Any] | None:
    """The job's latest ``step`` event as a mapping."""
    step = _RunningJob("", "", job_dir, 0.0).latest_step()
    return None if step is None else step.model_dump(mode="json")


class ConsoleReporter:
    """Progress of ``trace-bench run`` on the console (see module docstring)."""

    def __init__(self, total: int, stream: TextIO | None = None, quiet: bool = False,
                 live: bool | None = None, stub: bool = False) -> None:
        self.total = total
        self.stub = stub  # the panel says that the tokens and USD are the stub's
        self.done = 0
        self.stream = stream or sys.stderr
        self.quiet = quiet
        self.failed = 0
        self.tokens = 0
        self.usd = 0.0
        self.running: dict[str, _RunningJob] = {}
        self._session_finished = 0
        self._started_at = time.monotonic()
        self._eta_at: float | None = None  # when the run should end, as estimated at the last job's end
        self._live: Any = None
        if not quiet and (live if live is not None else _is_terminal(self.stream)):
            self._live = _start_live(self)

    def __enter__(self) -> ConsoleReporter:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def line(self, text: str) -> None:
        if self.quiet:
            return
        text = mask_secrets(text)
        if self._live is not None:
            self._live.console.print(text, markup=False, highlight=False, soft_wrap=True)
        else:
            print(text, file=self.stream, flush=True)

    def started(self, job_id: str, task: str, trainer: str, job_dir: str | Path | None = None) -> None:
        self.running[job_id] = _RunningJob(task, trainer, Path(job_dir) if job_dir else None, time.monotonic())

    def finished(self, record: JobResult) -> None:
        self.done += 1
        self._session_finished += 1
        now = time.monotonic()
        remaining = self.total - self.done
        self._eta_at = now + (now - self._started_at) / self._session_finished * remaining if remaining > 0 else now
        self.running.pop(record.job_id, None)
        self.failed += record.status in FAILED
        self.tokens += record.total_tokens
        self.usd += record.cost_usd
        spec = record.spec
        if record.status == Status.BUDGET_EXHAUSTED:  # a normal end: the budget it was given is spent
            extra = f" (stopped at its budget{budget_text(spec.budget)}, as planned)"
        else:  # both ends of an error: the cause is often last
            extra = f" error={shorten(record.error, 400)}" if record.error else ""
        # initial and best are on the split that selected the state; the verdict's score, where the task
        # has a test split, is the held-out one, named as the leaderboard names it
        held_out = "" if record.score_test_best is None else f" test_best={_fmt(record.score_test_best)}"
        self.line(
            f"[{self.done}/{self.total}] {record.status:<16} {spec.task} x {spec.trainer}"
            f" ({spec.params_label}) seed={spec.seed} initial={_fmt(record.score_initial)}"
            f" best={_fmt(record.score_best)}{held_out} calls={record.llm_calls} {record.time_seconds:.2f}s{extra}"
        )

    def eta_s(self) -> float | None:
        """Seconds left: the pace up to the last job that ended, counted down from then.  (Elapsed
        time over jobs done, recomputed at every refresh, climbed between two job ends: while the
        first jobs import, minutes.)  None before the first job ended."""
        if self._eta_at is None or self.total - self.done <= 0:
            return None
        return max(0.0, self._eta_at - time.monotonic())

    def close(self) -> None:
        live, self._live = self._live, None
        if live is not None:
            live.stop()

    def render(self) -> Any:
        """The live panel (rich renderables): counters, a bar, then one row per running job."""
        from rich.console import Group
        from rich.progress_bar import ProgressBar
        from rich.table import Table
        from rich.text import Text

        running = list(self.running.items())  # the runner's thread mutates the dict while we render
        spend = [job.latest_step() for _, job in running]
        tokens = self.tokens + sum(s.tokens for s in spend if s)
        usd = self.usd + sum(s.usd for s in spend if s)
        # two short lines: one long line was cut at the terminal's width (80 columns by default)
        header = (f"[bold]{self.done}/{self.total}[/] jobs done · running {len(running)} · "
                  f"[red]failed {self.failed}[/]\n"
                  f"tokens {tokens:,} · USD {usd:.4f}{' (stub mode)' if self.stub else ''} · elapsed {_duration(time.monotonic() - self._started_at)}"
                  f" · ETA {_duration(self.eta_s())}")
        table = Table(box=None, show_header=bool(running), pad_edge=False, expand=False)
        for column in ("job", "task x trainer", "step", "best", "calls", "time"):
            table.add_column(column, no_wrap=True)
        now = time.monotonic()
        for (job_id, job), step in zip(running, spend, strict=True):
            table.add_row(job_id[:12], f"{job.task} x {job.trainer}", "-" if step is None else str(step.step),
                          _fmt(None if step is None else step.best_score),
                          "-" if step is None else str(step.llm_calls), f"{now - job.started:.0f}s")
        return Group(Text.from_markup(header), ProgressBar(total=max(self.total, 1), completed=self.done, width=60), table)


def first_failures(records: list[JobResult], width: int = 200) -> list[str]:
    """The end-of-run lines that make a broken task easy to debug: per task (label), how many of its
    jobs failed and by which status, and the first failed job's error on one line (the job's
    stdout.log holds the whole error and its traceback)."""
    by_task: dict[str, list[JobResult]] = {}
    for record in records:
        if record.status in FAILED:
            by_task.setdefault(record.arm.task, []).append(record)
    lines = []
    for label, failed in by_task.items():
        counts: dict[str, int] = {}
        for record in failed:
            counts[str(record.status)] = counts.get(str(record.status), 0) + 1
        first = failed[0]
        error = (first.error or "no error recorded").strip().splitlines()[0]
        error = error if len(error) <= width else error[: width - 3] + "..."
        statuses = ", ".join(f"{count} {status}" for status, count in sorted(counts.items()))
        lines.append(f"  {label}: {statuses}; first: job {first.job_id} ({first.spec.trainer}, seed {first.spec.seed}): "
                     f"{mask_secrets(error)}")
    return lines


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty() and os.environ.get("TERM", "") != "dumb"
    except (AttributeError, ValueError):
        return False


def _start_live(progress: ConsoleReporter) -> Any:
    """A rich ``Live`` bound to ``progress.render``; None (plain lines) when rich is missing."""
    try:
        from rich.console import Console
        from rich.live import Live
    except ImportError:
        return None

    class _Panel:
        def __rich__(self) -> Any:
            return progress.render()

    live = Live(_Panel(), console=Console(file=progress.stream), refresh_per_second=4, transient=True,
                redirect_stdout=False, redirect_stderr=False)
    live.start()
    atexit.register(live.stop)  # restore the cursor even if the runner never calls close()
    return live

"""One job directory, ``<run>/jobs/<job_id>/``: what the driver writes about a job and what the job
process writes while it runs.  The storage contract is :class:`~trace_bench.store.run_store.RunStore`'s.

Who writes what (one writer per file, so no file needs a lock):

* the driver: ``job_meta.json`` before each attempt, ``attempts.json`` (the budget ledger),
  ``results.json`` when the job ended, and the files a remote job sent back;
* the job process (:meth:`open_events`, :meth:`open_curve`, :meth:`open_state_history`,
  :meth:`open_spend_journal`, :meth:`open_transcript`, :meth:`write_state`,
  :class:`~trace_bench.store.heartbeat.HeartbeatThread`, and ``stdout.log`` through its file
  descriptors): everything else, appended or replaced as it goes, so a killed job leaves its
  curve, events, best state and LLM spend behind.

This class is the directory's one entrance; the formats of its larger file kinds live beside it,
one module each: the curve (``store.curve_file``), the state files (``store.state_files``), the
spend journal (``store.spend``), the transcript (``store.transcript``), the heartbeat thread
(``store.heartbeat``).
"""

from __future__ import annotations

import functools
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

from trace_bench.store import curve_file, state_files
from trace_bench.store.atomic import write_bytes, write_json
from trace_bench.store.curve_file import CurveWriter
from trace_bench.store.events import (
    EventLog,
    LineLog,
    LogFollower,
    job_event_class,
    last_line,
    read_lines,
    utc_now,
)
from trace_bench.store.models import (
    Attempts,
    CurveRow,
    Event,
    Heartbeat,
    IntegrityReport,
    JobMeta,
    JobResult,
    Spend,
    StateFile,
    StateHistoryLine,
    Step,
    StoreError,
    TranscriptEntry,
)
from trace_bench.store.models.events import JOB_EVENTS
from trace_bench.store.reading import read_record
from trace_bench.store.spend import SpendJournal, read_spend
from trace_bench.store.transcript import (
    DEFAULT_MAX_CHARS,
    DEFAULT_MAX_MB,
    TranscriptLog,
    read_transcript,
    transcript_steps,
)

META_FILE = "job_meta.json"
RESULTS_FILE = "results.json"


class JobStore:
    """A job directory; cheap to create (no I/O until a method is called)."""

    def __init__(self, root: str | Path) -> None:
        self.root_str = os.fspath(root)

    @functools.cached_property
    def root(self) -> Path:
        """The directory as a Path, made on first use (a resume holds 100,000 stores that never
        need one)."""
        return Path(self.root_str)

    def __repr__(self) -> str:
        return f"JobStore({self.root_str!r})"

    @property
    def job_id(self) -> str:
        return os.path.basename(self.root_str)

    @property
    def run_root(self) -> Path:
        """The run directory this job belongs to (``<run>/jobs/<job_id>``)."""
        return self.root.parent.parent

    @property
    def runs_dir(self) -> Path:
        """The runs directory that holds the job's run."""
        return self.run_root.parent

    # --- paths (for display and for the few tools that need a path: TensorBoard, a guide) ---
    @property
    def meta_path(self) -> Path:
        return self.root / META_FILE

    @property
    def results_path(self) -> Path:
        return self.root / RESULTS_FILE

    @property
    def events_path(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def stdout_path(self) -> Path:
        return self.root / "stdout.log"

    @property
    def attempts_path(self) -> Path:
        return self.root / "attempts.json"

    @property
    def spend_path(self) -> Path:
        return self.root / "llm_spend.jsonl"

    @property
    def heartbeat_path(self) -> Path:
        return self.root / "heartbeat.json"

    @property
    def artifacts_dir(self) -> Path:
        return self.root / "artifacts"

    @property
    def curve_path(self) -> Path:
        return self.artifacts_dir / "curve.csv"

    @property
    def state_history_path(self) -> Path:
        return self.artifacts_dir / "state_history.jsonl"

    @property
    def transcript_path(self) -> Path:
        return self.artifacts_dir / TranscriptEntry.FILE

    @property
    def tensorboard_dir(self) -> Path:
        return self.root / "tb"

    @property
    def integrity_path(self) -> Path:
        return self.artifacts_dir / IntegrityReport.FILE

    def write_integrity(self, report: IntegrityReport) -> None:
        write_json(self.integrity_path, report.record(), durable=False)

    def read_integrity(self) -> IntegrityReport | None:
        """The job's integrity audit; None when it has none (an older job, or one killed first)."""
        return read_record(self.integrity_path, IntegrityReport)

    def state_path(self, kind: str) -> Path:
        return self.artifacts_dir / f"{kind}_state.yaml"

    def state_json_path(self, kind: str) -> Path:
        """The same state as JSON, for the original Trace-Bench's readers (``<kind>_state.json``)."""
        return self.artifacts_dir / f"{kind}_state.json"

    def exists(self) -> bool:
        return self.root.is_dir()

    def make_dirs(self) -> None:
        """``artifacts/`` and ``tb/`` (the original Trace-Bench always created ``tb/``; a
        TensorBoard logger or tracker writes there)."""
        self.artifacts_dir.mkdir(parents=True, exist_ok=True)
        self.tensorboard_dir.mkdir(parents=True, exist_ok=True)

    # --- the driver's files ---
    def write_meta(self, meta: JobMeta) -> None:
        write_json(self.meta_path, meta.record(), durable=False)

    def read_meta(self) -> JobMeta | None:
        return read_record(self.meta_path, JobMeta)

    def write_result(self, record: JobResult) -> None:
        """Durable (fsync'd) before it returns: this file is what makes the job done."""
        write_json(self.results_path, record.record(), durable=True)

    def read_result(self) -> JobResult | None:
        """The job's record; None when it has none.  Raises :class:`StoreError` when unreadable."""
        return read_record(self.results_path, JobResult)

    def result_or_none(self) -> JobResult | None:
        """The record, or None also when it cannot be read (the job then simply runs again)."""
        try:
            return self.read_result()
        except StoreError:
            return None

    def write_attempts(self, attempts: Attempts) -> None:
        write_json(self.attempts_path, attempts.record(), durable=True)

    def read_attempts(self) -> Attempts | None:
        try:
            return read_record(self.attempts_path, Attempts)
        except StoreError:
            return None

    def clear_for_attempt(self) -> None:
        """Empty the directory except the ledger, so a re-run leaves no stale curve, state or event."""
        if self.root.exists():
            for child in self.root.iterdir():
                if child.name == self.attempts_path.name:
                    continue
                if child.is_dir() and not child.is_symlink():
                    shutil.rmtree(child, ignore_errors=True)
                else:
                    child.unlink(missing_ok=True)
        self.root.mkdir(parents=True, exist_ok=True)

    def write_files(self, files: dict[str, bytes]) -> None:
        """Files a remote job sent back (only the driver writes a run directory); never outside it."""
        root = self.root.resolve()
        for relative, data in files.items():
            target = (self.root / relative).resolve()
            if root in target.parents:
                write_bytes(target, data, durable=False)

    def files(self) -> dict[str, bytes]:
        """Every file of the directory by relative path (what a remote job sends back)."""
        return {str(p.relative_to(self.root)): p.read_bytes() for p in self.root.rglob("*") if p.is_file()}

    # --- the job process's files ---
    def open_events(self) -> EventLog:
        return EventLog(self.events_path, JOB_EVENTS)

    def follow_events(self) -> LogFollower:
        """A reader of the lines appended to the job's events since its previous call."""
        return LogFollower(self.events_path, job_event_class)

    def events(self, *, contains: str | None = None) -> Iterator[Event]:
        """The job's events; a torn last line or an invalid line is skipped."""
        return read_lines(self.events_path, job_event_class, contains=contains)

    def last_step(self) -> Step | None:
        """The latest ``step`` event (only the tail of the log is read)."""
        event = last_line(self.events_path, job_event_class, contains='"step"',
                          accept=lambda event: isinstance(event, Step))
        return event if isinstance(event, Step) else None

    def open_curve(self, objectives: list[str] | None = None) -> CurveWriter:
        """The curve writer; ``objectives`` names the ``obj_<metric>`` columns of a multi-objective task."""
        return CurveWriter(self.curve_path, objectives)

    def append_curve_row(self, row: CurveRow) -> None:
        """Add a row to the curve of a job that no longer runs (the driver closing a killed job's
        curve at its total spend), in the file's column order; a row torn by the kill stays a
        torn line of its own (readers drop it)."""
        curve_file.append_curve_row(self.curve_path, row)

    def read_curve(self) -> list[CurveRow]:
        """Curve points (objective columns included); a torn last row and cells that are not
        numbers are dropped/blank."""
        return curve_file.read_curve(self.curve_path)

    def read_stdout_tail(self, lines: int = 40) -> str:
        """The last ``lines`` lines of ``stdout.log`` (empty when there is none)."""
        try:
            with open(self.stdout_path, "rb") as handle:
                handle.seek(0, os.SEEK_END)
                handle.seek(max(0, handle.tell() - 64 * 1024))
                text = handle.read().decode("utf-8", errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def curve_cells(self) -> tuple[list[str], list[list[str]]]:
        """(the file's header, rows as strings in ``CURVE_COLUMNS`` order, objective columns left
        out); a row with the wrong number of cells (torn by a kill) is dropped.  Fast path for bulk
        readers (analysis)."""
        return curve_file.curve_cells(self.curve_path)

    def open_spend_journal(self, *, durable: bool) -> SpendJournal:
        """The budget journal of this attempt (``durable``: fsync'd per line, for real mode)."""
        return SpendJournal(self.spend_path, durable=durable)

    def read_spend(self, phase: str = "train") -> Spend | None:
        """Spend of ``phase`` (``train``, ``measure``) the journal records, calls cut by a kill
        included (see ``store.spend``); None when the directory has no journal."""
        return read_spend(self.spend_path, phase)

    def open_transcript(self, *, max_chars: int = DEFAULT_MAX_CHARS, max_mb: float = DEFAULT_MAX_MB) -> TranscriptLog:
        """The transcript of this attempt: each LLM call's messages and answers (``store.transcript``)."""
        return TranscriptLog(self.transcript_path, max_chars=max_chars, max_mb=max_mb)

    def read_transcript(self, step: int | None = None) -> list[TranscriptEntry]:
        """The job's transcript entries, or those of one trainer ``step`` (none when it kept no transcript)."""
        return list(read_transcript(self.transcript_path, step=step))

    def transcript_steps(self) -> dict[int, int]:
        """Calls per trainer step in the job's transcript (empty when it kept none)."""
        return transcript_steps(self.transcript_path)

    def open_state_history(self) -> LineLog:
        return LineLog(self.state_history_path)

    def read_state_history(self) -> list[StateHistoryLine]:
        return list(read_lines(self.state_history_path, lambda _: StateHistoryLine))

    def write_state(self, kind: str, state: StateFile) -> None:
        """``<kind>_state.yaml`` and the same record as ``<kind>_state.json`` (each replaced
        atomically; not fsync'd: they are rewritten as the job goes; the YAML file is the one read)."""
        state_files.write_state(self.state_path(kind), self.state_json_path(kind), state)

    def read_state(self, kind: str) -> StateFile | None:
        return state_files.read_state(self.state_path(kind))

    def open_stdout(self) -> int:
        """A file descriptor appending to ``stdout.log``; the job process makes it its fds 1 and 2
        (what passes through is masked by the process's streams, see ``execution.job_process``)."""
        self.root.mkdir(parents=True, exist_ok=True)
        return os.open(self.stdout_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)

    def write_heartbeat(self) -> None:
        beat = Heartbeat(pid=os.getpid(), ts=utc_now(), monotonic=time.monotonic())
        write_json(self.heartbeat_path, beat.record(), durable=False)

    def read_heartbeat(self) -> Heartbeat | None:
        try:
            return read_record(self.heartbeat_path, Heartbeat)
        except StoreError:
            return None


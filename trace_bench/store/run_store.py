"""The run directory and its one entrance: :class:`RunStore`.

Nothing outside ``trace_bench.store`` opens a file of a run directory; the runner, ``validate``,
analysis, the UI and the trackers all read and write through this class and
:class:`~trace_bench.store.job_store.JobStore`.  The layout is the original Trace-Bench tree
(docs/artifacts.md); every file has a pydantic model (``trace_bench.store.models``) whose JSON
Schema is exported to docs/schemas/.
"""

from __future__ import annotations

import contextlib
import functools
import os
import shutil
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from trace_bench.store import layout, manifest_file, run_guard
from trace_bench.store.atomic import write_json, write_text
from trace_bench.store.columns import Column, typed, typed_rows
from trace_bench.store.events import (
    EventLog,
    LogFollower,
    read_lines,
    run_event_class,
)
from trace_bench.store.files_index import write_files_index
from trace_bench.store.job_store import JobStore
from trace_bench.store.models import (
    RUN_EVENTS,
    EnvInfo,
    Event,
    FilesIndex,
    GitInfo,
    JobResult,
    Manifest,
    ManifestJob,
    RaceRecord,
    StoreError,
    Summary,
)
from trace_bench.store.reading import read_csv, read_record, read_yaml
from trace_bench.store.results_index import INDEX_FILE, ResultsIndex
from trace_bench.store.run_guard import RunLock as RunLock
from trace_bench.store.run_guard import RunLocked as RunLocked
from trace_bench.store.run_guard import RunVanished as RunVanished
from trace_bench.store.tables import LEADERBOARD_TYPES, ResultTables


class RunNotFound(StoreError):
    """A path or id that is not a run directory."""


class RunStore:
    """One run directory, ``<runs_dir>/<run_id>/``.

    **Storage contract.**  Every method of this class and of ``JobStore`` keeps these promises;
    tests/store/test_contract.py checks each of them once.

    * *Atomic records.*  Every JSON and YAML record and every table (``results.csv``,
      ``summary.json``, ``leaderboard.csv``, ``meta/*``, ``job_meta.json``, ``results.json``,
      ``attempts.json``, ``heartbeat.json``, the state files) is written to a temporary file in
      its directory and renamed over the target: a reader, or a crash at any instant, sees the old
      version or the new one, never a torn file.  Tables, meta files, ``results.json`` and
      ``attempts.json`` are fsync'd (file and directory) before the call returns; the others are
      rewritten as a job goes and need not survive a power cut.
    * *Strict JSON.*  No file holds ``NaN`` or ``Infinity``: non-finite numbers are written as
      ``null`` (``JobResult.non_finite`` names the scores that were non-finite).
    * *Readable while written.*  Logs (the two ``events.jsonl``, ``state_history.jsonl``,
      ``curve.csv``, ``stdout.log``) are appended one line at a time and flushed per line, so
      ``tail -f``, :meth:`follow_events` and the UI see progress as it happens.  Readers skip a
      torn last line (a kill mid-write) and lines that are not a valid record.
    * *Exactly once.*  A job is done when its ``results.json`` exists with a complete status;
      only the driver writes it, after the job process ended.  Tables are rebuilt from those
      records (:meth:`tables`), never appended to, so a run resumed after a kill at any instant
      has one row per job; a job without a record (or with an incomplete one) runs again, after
      :meth:`JobStore.clear_for_attempt` removed its previous attempt's files, and the budget it
      had spent is carried in ``attempts.json``.
    * *What a kill leaves.*  Killing the driver releases :class:`RunLock` and takes its jobs
      (and every process they started) with it; each job directory keeps what was appended and
      the last atomic version of each record, and its budget journal ``llm_spend.jsonl`` holds
      every training-phase LLM call sent, those cut off in flight included.  Killing a job leaves its curve, events and best state so far: the driver builds
      its record from them.
    * *One writer per file.*  :meth:`lock` admits one driver per run.  The driver writes the
      run's files and each job's meta, ledger and record; a job process writes only its own
      directory's logs, states and heartbeat.  Remote jobs (Ray) send their files back and the
      driver writes them (:meth:`JobStore.write_files`).
    * *Versioned.*  Every record has ``schema_version``; readers upgrade older files and refuse
      newer ones with a message (``NewerSchemaError``), see ``trace_bench.store.models``.
    * *Masked.*  Every record, log line and ``stdout.log`` passes through ``mask_secrets``.

    This class is the run directory's one entrance; the formats of its larger file kinds live
    beside it, one module each: the manifest (``store.manifest_file``), the lock and the
    directory's identity (``store.run_guard``), the tables (``store.tables``), the results
    index (``store.results_index``), the files index (``store.files_index``).

    Missing files read as ``None``; files that cannot be read raise :class:`StoreError` with the
    file's path and the problem.
    """

    def __init__(self, root: str | Path) -> None:
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"RunStore({str(self.root)!r})"

    # --- finding and creating runs ---
    @classmethod
    def create(cls, runs_dir: str | Path, run_id: str) -> RunStore:
        """The run ``run_id`` under ``runs_dir``, with its ``meta/`` and ``jobs/`` directories."""
        store = cls(Path(runs_dir) / run_id)
        store.meta_dir.mkdir(parents=True, exist_ok=True)
        store.jobs_dir.mkdir(exist_ok=True)
        return store

    @staticmethod
    def is_run(path: str | Path) -> bool:
        return layout.is_run(path)

    @classmethod
    def locate(cls, reference: str | Path, runs_dir: str | Path) -> RunStore:
        """A run given by path or by id under ``runs_dir``; :class:`RunNotFound` otherwise."""
        found = layout.find_run(reference, runs_dir)
        if found is None:
            raise RunNotFound(f"no run '{reference}' (looked for meta/manifest.json in "
                              f"{', '.join(map(str, layout.candidates(reference, runs_dir)))})")
        return cls(found)

    @classmethod
    def find(cls, runs_dir: str | Path, depth: int = 1) -> list[RunStore]:
        """The runs of a runs directory (or the directory itself when it is a run); with
        ``depth`` > 1 also runs in subdirectories down to that depth (a run's own directories are
        not searched), as in a tree of runs by date or project."""
        return [cls(path) for path in layout.find_runs(runs_dir, depth)]

    def exists(self) -> bool:
        return self.root.is_dir()

    def remove(self, *, with_runs_dir: bool = False) -> None:
        """Delete this run directory (one a config error made before any job: it leaves nothing
        behind); with ``with_runs_dir`` also its runs directory when that is left empty."""
        shutil.rmtree(self.root, ignore_errors=True)
        if with_runs_dir:
            with contextlib.suppress(OSError):
                self.root.parent.rmdir()

    def identity(self) -> tuple[int, int]:
        """(device, inode) of the run directory, to tell it from a replacement at the same path."""
        return run_guard.directory_identity(self.root)

    def check_identity(self, identity: tuple[int, int]) -> None:
        """:class:`RunVanished` when the directory at this path is gone, or is not the one that
        had ``identity`` (deleted and made again, moved away and replaced)."""
        run_guard.check_identity(self.root, identity)

    def lock(self) -> RunLock:
        """Hold the run for this process (:class:`RunLocked` when another process holds it)."""
        self.root.mkdir(parents=True, exist_ok=True)
        return RunLock(self.root / ".lock")

    # --- paths (for messages and display) ---
    @property
    def run_id(self) -> str:
        return self.root.name

    @property
    def meta_dir(self) -> Path:
        return self.root / layout.META_DIR

    @property
    def snapshot_path(self) -> Path:
        return layout.snapshot_file(self.root)

    @property
    def manifest_path(self) -> Path:
        return self.meta_dir / layout.MANIFEST_FILE

    @property
    def env_path(self) -> Path:
        return self.meta_dir / "env.json"

    @property
    def git_path(self) -> Path:
        return self.meta_dir / "git.json"

    @property
    def files_index_path(self) -> Path:
        return self.meta_dir / "files_index.json"

    @property
    def race_path(self) -> Path:
        return self.meta_dir / "race.json"

    @property
    def results_csv_path(self) -> Path:
        return self.root / "results.csv"

    @property
    def summary_path(self) -> Path:
        return self.root / "summary.json"

    @property
    def leaderboard_path(self) -> Path:
        return self.root / "leaderboard.csv"

    @property
    def events_path(self) -> Path:
        return self.root / "events.jsonl"

    @property
    def report_path(self) -> Path:
        return self.root / "report.html"

    @property
    def jobs_dir(self) -> Path:
        return self.root / "jobs"

    @functools.cached_property
    def _jobs_root(self) -> str:
        return str(self.jobs_dir)

    @property
    def llm_cache_path(self) -> Path:
        """The run's LLM cache (SQLite, owned by the LLM layer) when the config names none."""
        return layout.llm_cache_file(self.root)

    @property
    def llm_slots_dir(self) -> Path:
        """Lock files bounding concurrent LLM requests across the run's processes."""
        return self.root / ".llm_slots"

    # --- meta ---
    def write_snapshot(self, text: str) -> None:
        write_text(self.snapshot_path, text)

    def read_snapshot_text(self) -> str | None:
        """The snapshot as written (its header comments included), or None when there is none."""
        try:
            return self.snapshot_path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return None

    def read_snapshot(self) -> dict[str, Any] | None:
        data = read_yaml(self.snapshot_path)
        if data is not None and not isinstance(data, dict):
            raise StoreError(f"{self.snapshot_path}: expected a mapping, found {type(data).__name__}")
        return data

    def write_manifest(self, manifest: Manifest) -> None:
        self.write_manifest_stream(manifest, (job.model_dump(mode="json") for job in manifest.jobs))

    def write_manifest_stream(self, head: Manifest, entries: Iterable[dict[str, Any]]) -> None:
        """The manifest ``head`` with ``entries`` (JSON-ready job entries) as its jobs, one per line,
        written as they come (a 100,000-job manifest is never one string in memory)."""
        manifest_file.write_manifest_stream(self.manifest_path, head, entries)

    def read_manifest(self) -> Manifest | None:
        return manifest_file.read_manifest(self.manifest_path)

    def read_manifest_head(self) -> Manifest | None:
        """The manifest without its job entries (``jobs`` empty): what admission and the task root
        need, read from the first line of the one-entry-per-line layout (the whole file otherwise)."""
        return manifest_file.read_manifest_head(self.manifest_path)

    def manifest_entries(self) -> Iterator[ManifestJob]:
        """The manifest's job entries one at a time, each upgraded and validated as it is read (a
        manifest in the one-entry-per-line layout is never whole in memory); none without a manifest.
        :class:`StoreError` for an entry that cannot be read."""
        return manifest_file.manifest_entries(self.manifest_path)

    def read_manifest_listing(self) -> tuple[Manifest, list[str]] | None:
        """(the manifest's head, as :meth:`read_manifest_head`; its job ids, in order), in one
        pass over the file and without building its entries: what opening a run needs of it.
        ``None`` when there is none; :class:`StoreError` when it cannot be read."""
        return manifest_file.read_manifest_listing(self.manifest_path)

    def write_environment(self, env: EnvInfo, git: GitInfo) -> None:
        write_json(self.env_path, env.record())
        write_json(self.git_path, git.record())

    def read_env(self) -> EnvInfo | None:
        return read_record(self.env_path, EnvInfo)

    def read_git(self) -> GitInfo | None:
        return read_record(self.git_path, GitInfo)

    def write_race(self, race: RaceRecord) -> None:
        """``meta/race.json`` (a raced run's rounds), replaced atomically and made durable."""
        write_json(self.race_path, race.record(), durable=True)

    def read_race(self) -> RaceRecord | None:
        return read_record(self.race_path, RaceRecord)

    def write_files_index(self) -> int:
        """Every file of the run with its size, so a reader knows what exists without listing dirs;
        returns how many (incremental, see :mod:`.files_index`)."""
        return write_files_index(self.root, self.files_index_path)

    def read_files_index(self) -> FilesIndex | None:
        return read_record(self.files_index_path, FilesIndex)

    # --- jobs ---
    def job(self, job_id: str) -> JobStore:
        return JobStore(os.path.join(self._jobs_root, job_id))  # no Path join: 100,000 calls on a resume

    @property
    def results_index(self) -> ResultsIndex:
        """Every finished job's record in one file (see :mod:`.results_index`)."""
        return ResultsIndex(self.root / INDEX_FILE)

    def record_result(self, job: JobStore, record: JobResult) -> None:
        """Write a job's ``results.json`` (the source of truth), then its line in the index."""
        job.write_result(record)
        self.results_index.append(job, record)

    def job_ids(self) -> list[str]:
        """Job directories present (sorted), whether or not the job has a record."""
        try:
            return sorted(entry.name for entry in os.scandir(self.jobs_dir) if entry.is_dir())
        except FileNotFoundError:
            return []

    def read_results(self) -> dict[str, Any]:
        """Every readable job record by job id (a job without one, or an unreadable one, is left out)."""
        records = {}
        for job_id in self.job_ids():
            record = self.job(job_id).result_or_none()
            if record is not None:
                records[job_id] = record
        return records

    # --- the run's event log ---
    def open_events(self) -> EventLog:
        return EventLog(self.events_path, RUN_EVENTS)

    def append_event(self, event: Event | dict[str, Any]) -> None:
        """One line in the run's log (opens and closes it; for occasional writers such as trackers)."""
        with self.open_events() as log:
            log.write(event)

    def events(self) -> Iterator[Event]:
        return read_lines(self.events_path, run_event_class)

    def follow_events(self) -> LogFollower:
        return LogFollower(self.events_path, run_event_class)

    def follow_job_events(self, job_id: str) -> LogFollower:
        return self.job(job_id).follow_events()

    # --- tables ---
    def tables(self, run_meta: dict[str, Any], min_interval_s: float = 1.0) -> ResultTables:
        """The writer of ``results.csv``, ``summary.json`` and ``leaderboard.csv``."""
        return ResultTables(self.results_csv_path, self.summary_path, self.leaderboard_path, run_meta,
                            min_interval_s=min_interval_s)

    def read_summary(self) -> Summary | None:
        return read_record(self.summary_path, Summary)

    def read_results_table(self) -> tuple[list[str], list[list[str]]] | None:
        """(header, rows) of ``results.csv`` as text; ``None`` before the first job ended."""
        return read_csv(self.results_csv_path)

    def read_result_rows(self, *, original: bool = True) -> tuple[list[Column], list[list[Any]]] | None:
        """``results.csv`` typed by the job record's columns (``store.columns``): our columns in
        our order (an older run's missing ones empty), then the file's others (without the original
        Trace-Bench's unless ``original``); ``None`` before the first job ended.  :class:`StoreError`
        names a cell that is not of its column's type."""
        table = read_csv(self.results_csv_path)
        if table is None:
            return None
        return typed_rows(*table, source=self.results_csv_path, original=original)

    def read_leaderboard(self) -> tuple[list[str], list[list[str]]] | None:
        """(header, rows) of ``leaderboard.csv`` as text."""
        return read_csv(self.leaderboard_path)

    def read_leaderboard_rows(self) -> list[dict[str, Any]] | None:
        """``leaderboard.csv``'s rows typed by its columns (``LeaderboardRow``); ``None`` before it exists."""
        table = read_csv(self.leaderboard_path)
        if table is None:
            return None
        head, rows = table
        kinds = [LEADERBOARD_TYPES.get(name, "str") for name in head]
        try:
            return [{name: typed(kind, text) for name, kind, text in zip(head, kinds, row, strict=True)} for row in rows]
        except ValueError as exc:
            raise StoreError(f"{self.leaderboard_path}: {exc}") from None

    def write_report(self, html: str, out: str | Path | None = None) -> Path:
        """``report.html`` in the run (or at ``out``), replaced atomically."""
        target = Path(out) if out is not None else self.report_path
        write_text(target, html)
        return target


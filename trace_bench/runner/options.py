"""What a run is given (:class:`RunOptions`) and what it returns (:class:`RunOutcome`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trace_bench.runner.plan import ResumeMode
from trace_bench.store.models import JobResult, KeyRefusal
from trace_bench.store.results_index import LazyResult
from trace_bench.store.run_store import RunLock, RunStore
from trace_bench.store.status import COMPLETE


@dataclass
class RunOptions:
    runs_dir: str | None = None
    root: str | None = None
    max_workers: int | None = None
    resume: ResumeMode | None = None
    resume_run: str | None = None
    force: bool = False
    job_timeout: float | None = None
    logger: str | None = None
    quiet: bool = False
    config_path: str | None = None
    executor: str | None = None
    ray_address: str | None = None
    no_preflight: bool = False
    #: the command-line overrides (flag, text) the config was resolved with, for the config snapshot
    overrides: list[tuple[str, str]] = field(default_factory=list)


@dataclass
class RunOutcome:
    run_id: str
    run_dir: Path
    #: every job's record, in matrix order; a record the run carried over from the results index
    #: stays a LazyResult (its id, status and spec at hand, the rest parsed when read)
    records: list[JobResult | LazyResult]
    interrupted: bool = False
    not_run: list[str] = field(default_factory=list)
    #: a job met a refusal of the key (or a spent quota): the run stopped scheduling (exit 2)
    key_refused: KeyRefusal | None = None

    @property
    def exit_code(self) -> int:
        if self.key_refused is not None:
            return 2
        if self.interrupted or self.not_run:
            return 1
        return 0 if all(r.status in COMPLETE for r in self.records) else 1


@dataclass
class OpenedRun:
    store: RunStore
    lock: RunLock
    digest: str
    created: bool
    created_at: str
    task_root: str | None = None
    config_hashes: list[str] = field(default_factory=list)
    extended: bool = False  # this config added cells to the run (trace_bench.runner.extend)
    runs_dir_created: bool = False  # the runs directory itself was made for this run
    preflight: list[dict[str, Any]] = field(default_factory=list)  # checks made before the run opened
    listed: list[str] | None = None  # the job ids its manifest held when opened (None: no job entries)
    entries_digest: str | None = None  # the manifest's entries_digest when opened

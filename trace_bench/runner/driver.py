"""The driver loop of a run: write the meta records, plan, submit job processes, record results.

Per-job ``results.json`` is the source of truth; the driver writes it (through the store) when a
job process ended, adds it to the in-memory tables and rewrites them, so every file it touches is
atomic and a resume never sees a duplicate.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from trace_bench.config.models import RunConfig
from trace_bench.execution.job_process import Finished, JobLaunch
from trace_bench.registry.trainers import trainer_origins
from trace_bench.runner.console import ConsoleReporter
from trace_bench.runner.executors import make_executor
from trace_bench.runner.interrupts import InterruptHandler
from trace_bench.runner.manifest import manifest_entries, manifest_head
from trace_bench.runner.options import OpenedRun, RunOptions, RunOutcome
from trace_bench.runner.plan import Plan, PlannedJob, ResumeMode, plan_jobs, prepare_attempt
from trace_bench.runner.race import Race
from trace_bench.runner.salvage import record_for, salvage_record
from trace_bench.sandbox import sandbox_info, weak_warning
from trace_bench.store.environment import environment_info, git_info
from trace_bench.store.events import EventLog
from trace_bench.store.models import (
    JobEnded,
    JobMeta,
    JobResult,
    JobRetry,
    JobSpec,
    JobSubmitted,
    KeyRefusal,
    ManifestJob,
    Preflight,
    RunFinished,
    RunStarted,
    SandboxSetting,
    Spend,
    StoreError,
)
from trace_bench.store.run_store import RunStore, RunVanished
from trace_bench.store.status import SUCCESSFUL, PlanState, Status
from trace_bench.store.tables import ResultTables


def drive(config: RunConfig, options: RunOptions, jobs: list[JobSpec], store: RunStore, opened: OpenedRun,
          resume: ResumeMode, job_timeout: float | None, interrupts: InterruptHandler) -> RunOutcome:
    run_id = store.run_id
    identity = store.identity()  # the directory this driver writes: one deleted or replaced stops the run
    listed = opened.listed  # the manifest as opened: read once per command (runner/run.py)
    on_disk_digest = opened.entries_digest
    race = Race.open(config, jobs, store, fresh=resume == "none") if config.race is not None else None
    if race is not None:
        jobs = race.jobs()  # the rounds planned so far: a raced run's manifest lists what it plans
    carried = carried_entries(store, jobs, listed)
    meta = {"run_id": run_id, "config_hash": opened.digest, "mode": config.mode, "tags": config.tags,
            "total_jobs": len(jobs) + len(carried), "created_at": opened.created_at,
            "task_root": opened.task_root}
    _write_environment(config, jobs, store)
    head = manifest_head(meta, opened.config_hashes)
    if listed != [j.job_id for j in jobs] + [e.job_id for e in carried]:  # a resume of the same matrix keeps it until the end
        store.write_manifest_stream(head, manifest_entries(jobs, {}, carried=carried))
        on_disk_digest = None
    planned = plan_jobs(jobs, store, resume)
    plan = planned.jobs
    tables = store.tables(meta)
    tables.set_order([j.job_id for j in jobs] + [e.job_id for e in carried])
    tables.set_planned([j.arm for j in jobs] + [e.spec.arm for e in carried])
    reused = _table_what_does_not_run(plan, carried, store, tables)
    to_run = [item for item in plan if item.run]
    console = ConsoleReporter(len(jobs), quiet=options.quiet, stub=config.mode == "stub")
    interrupts.notify = console.line
    console.done = len(jobs) - len(to_run)
    events = store.open_events()
    events.write(RunStarted(run_id=run_id, config_hash=opened.digest, total_jobs=len(jobs), to_run=len(to_run),
                            resume=resume, max_workers=config.max_workers))
    for check in opened.preflight:  # its requests are the run's, apart from every job's spend
        events.write(Preflight(**check))
    console.line(f"run {run_id}: {len(jobs)} jobs, {len(to_run)} to run, {config.max_workers} worker(s) -> {store.root}")
    for task, reason in sorted({(j.task, j.skip_reason) for j in jobs if j.skip_reason}):
        console.line(f"warning: {task}: {reason}; its jobs are recorded as skipped")
    try:
        loop = _Loop(config, store, tables, console, events, interrupts, job_timeout, fresh=resume == "none",
                     identity=identity)
        executor = make_executor(config, options.executor, options.ray_address)
        rounds = None if race is None else _Rounds(race, jobs, planned, carried, meta, opened, store, tables,
                                                   console, resume, reused)
        try:
            interrupted = loop.run(executor, to_run, None if rounds is None else rounds.next)
        finally:
            if hasattr(executor, "shutdown"):
                executor.shutdown()
        if race is not None and not race.ended and interrupts.stop_scheduling:
            interrupted = True  # the race had rounds left to run
        to_run = to_run or (rounds.ran if rounds is not None else [])
        not_run = [item.spec.job_id for item in plan if item.spec.job_id not in tables.records]
        if not planned.index_complete:
            stores = {item.spec.job_id: item.job for item in plan} | {e.job_id: store.job(e.job_id) for e in carried}
            store.results_index.rewrite(stores, tables.records)
        changed = to_run or carried or not planned.index_complete or not tables.current_on_disk()
        if changed and (tables.dirty or not tables.current_on_disk()):
            # else they hold these records already: a resume of a finished run, or every record was
            # written after the last job ended (a one-job run rebuilt them twice at its end)
            tables.write()
        _write_final_manifest(meta, store, opened, jobs, carried, tables, reused, on_disk_digest)
        refused = loop.key_refused
        events.write(RunFinished(run_id=run_id, counts=tables.counts(), not_run=len(not_run), interrupted=interrupted,
                                 key_refused=refused.key_variable if refused else ""))
    finally:
        console.close()
        interrupts.notify = None
    events.close()
    from trace_bench.trackers import active_trackers, export_run

    trackers = active_trackers(config.trackers)
    if trackers:
        export_run(store.root, trackers)
    store.write_files_index()
    return RunOutcome(run_id, store.root, tables.sorted_records(), interrupted=interrupted, not_run=not_run,
                      key_refused=loop.key_refused)


def _write_environment(config: RunConfig, jobs: list[JobSpec], store: RunStore) -> None:
    """env.json: the machine, the sandbox setting and where each trainer comes from; a weak sandbox
    is warned about even with --quiet (the run is not isolated)."""
    env = environment_info()
    setting = sandbox_info(config.sandbox)
    env.sandbox = SandboxSetting.model_validate(setting)
    # under the names the config gives too (an alias), which is what a resume that misses one reports
    env.trainers = trainer_origins([*(job.trainer for job in jobs), *(entry.id for entry in config.trainers)])
    store.write_environment(env, git_info())
    if weak_warning(setting):
        print(f"WARNING: {weak_warning(setting)}", file=sys.stderr, flush=True)


def _table_what_does_not_run(plan: list[PlannedJob], carried: list[ManifestJob], store: RunStore,
                             tables: ResultTables) -> set[str]:
    """Record the skipped jobs and table the records this session keeps (a resume's finished jobs
    and the entries carried from an earlier config); the ids of the kept ones."""
    reused = set()
    for item in plan:
        if item.spec.skip_reason and item.previous is None:
            tables.add(_record_skipped(item, store))
        elif item.previous is not None and not item.run:
            tables.add(item.previous)
            reused.add(item.spec.job_id)
    for entry in carried:
        record = store.job(entry.job_id).result_or_none()
        if record is not None:
            tables.add(record)
            reused.add(entry.job_id)
    return reused


def _write_final_manifest(meta: dict[str, Any], store: RunStore, opened: OpenedRun, jobs: list[JobSpec],
                          carried: list[ManifestJob], tables: ResultTables, reused: set[str],
                          on_disk_digest: str | None) -> None:
    """The manifest with every job's final state, unless the file holds these entries already (a
    resume that changed nothing)."""
    statuses = {r.job_id: str(r.status) for r in tables.records.values()}
    statuses.update({job_id: str(PlanState.REUSED) for job_id in reused if job_id in statuses})
    digest = _entries_digest(meta, store, statuses, [j.job_id for j in jobs] + [e.job_id for e in carried])
    if on_disk_digest != digest:
        head = manifest_head(meta, opened.config_hashes).model_copy(update={"entries_digest": digest})
        store.write_manifest_stream(head, manifest_entries(jobs, statuses, records=tables.records, carried=carried))


@dataclass
class _Rounds:
    """A raced run's next round, planned like the first (:mod:`trace_bench.runner.race`): its jobs
    join the run's plan, tables and manifest, and the loop runs the ones without a record."""

    race: Race
    jobs: list[JobSpec]  # the run's planned jobs so far: grown in place, as the driver reads them at its end
    planned: Plan
    carried: list[ManifestJob]
    meta: dict[str, Any]
    opened: OpenedRun
    store: RunStore
    tables: ResultTables
    console: ConsoleReporter
    resume: ResumeMode
    reused: set[str]
    ran: list[PlannedJob] = field(default_factory=list)

    def next(self) -> list[PlannedJob]:
        """The jobs of the next round that must run; [] when the race ended, or when a job of the
        open round has no record (it was not run: ``--resume failed`` runs no job that never ran), so
        a round is never decided on missing jobs."""
        while True:
            if not self.race.round_complete(self.tables.records):
                return []
            new = self.race.advance(self.tables.records)
            self.console.line(self.race.summary())
            if not new:
                return []
            self.jobs.extend(new)
            self.jobs.sort(key=lambda spec: spec.index)
            plan = plan_jobs(new, self.store, "auto" if self.resume == "failed" else self.resume)  # new cells run
            self.planned.jobs.extend(plan.jobs)
            self.planned.index_complete = self.planned.index_complete and plan.index_complete
            ids = [j.job_id for j in self.jobs] + [e.job_id for e in self.carried]
            self.meta["total_jobs"] = len(ids)
            self.tables.set_order(ids)
            self.tables.set_planned([j.arm for j in self.jobs] + [e.spec.arm for e in self.carried])
            self.reused |= _table_what_does_not_run(plan.jobs, [], self.store, self.tables)
            self.store.write_manifest_stream(manifest_head(self.meta, self.opened.config_hashes),
                                             manifest_entries(self.jobs, {}, carried=self.carried))
            self.console.total = len(self.jobs)
            to_run = [item for item in plan.jobs if item.run]
            if to_run:
                self.ran.extend(to_run)
                return to_run


class _Loop:
    """Submits planned jobs while slots are free and records each job that ends."""

    def __init__(self, config: RunConfig, store: RunStore, tables: ResultTables, console: ConsoleReporter,
                 events: EventLog, interrupts: InterruptHandler, job_timeout: float | None, fresh: bool,
                 identity: tuple[int, int]) -> None:
        self.config, self.store, self.run_id, self.tables, self.console = config, store, store.run_id, tables, console
        self.events, self.interrupts, self.job_timeout, self.fresh = events, interrupts, job_timeout, fresh
        self.identity = identity
        self.tries: dict[str, int] = {}
        self.failed_seen = False
        #: the first job's refusal of the key (401/403, a quota spent for good): no job starts after it
        self.key_refused: KeyRefusal | None = None

    def run(self, executor: Any, to_run: list[PlannedJob], more: Callable[[], list[PlannedJob]] | None = None) -> bool:
        """Run ``to_run``, then what ``more`` gives each time the run is idle (a race's next round)
        until it gives nothing; True when an interrupt left some of it unstarted."""
        pending = list(to_run)
        by_id = {item.spec.job_id: item for item in to_run}
        while True:
            if not pending and not executor.running:
                pending = more() if more is not None and not self._stopped() else []
                if not pending:
                    break
                by_id.update((item.spec.job_id, item) for item in pending)
            self._check_run_dir(executor)
            stop = self._stopped()
            while pending and executor.free_slots > 0 and not stop:
                self._submit(executor, pending.pop(0))
            if self.interrupts.kill_running and executor.running:
                executor.kill_all("interrupted")
            if stop and not executor.running:
                break
            finished_jobs = executor.poll(0.5)
            if finished_jobs:
                self._check_run_dir(executor)  # before anything is written for them
            for finished in finished_jobs:
                item = by_id[finished.job_id]
                if self._retry(item, finished):
                    pending.insert(0, item)
                else:
                    self._record(item, finished)
        return self.interrupts.stop_scheduling and bool(pending)

    def _stopped(self) -> bool:
        return (self.interrupts.stop_scheduling or (self.config.fail_fast and self.failed_seen)
                or self.key_refused is not None)

    def _check_run_dir(self, executor: Any) -> None:
        """:class:`RunVanished` (after stopping every job) when the run directory was deleted or
        replaced: writing on would recreate part of it and end with a "complete" run that is not."""
        try:
            self.store.check_identity(self.identity)
        except RunVanished:
            if executor.running:
                executor.kill_all("run_vanished")
                while executor.running:
                    executor.poll(0.5)
            raise

    def _submit(self, executor: Any, item: PlannedJob) -> None:
        spec = item.spec
        prepare_attempt(item, fresh=self.fresh)
        item.job.write_meta(JobMeta.planned(spec, self.run_id, item.attempt))
        executor.submit(JobLaunch(job_id=spec.job_id, job_dir=str(item.job.root), timeout_s=self.job_timeout,
                                  memory_mb=self.config.job_memory_mb,
                                  args=launch_args(spec, self.run_id, item.carried, item.attempt,
                                                   carried_measure=item.carried_measure)))
        self.console.started(spec.job_id, spec.task, spec.trainer, job_dir=item.job.root)
        self.events.write(JobSubmitted(job_id=spec.job_id, task=spec.task, trainer=spec.trainer, seed=spec.seed))

    def _retry(self, item: PlannedJob, finished: Finished) -> bool:
        """A lost worker (no record, not killed) is re-queued up to ``max_retries`` times."""
        if finished.files:
            item.job.write_files(finished.files)  # a remote job's files: the driver alone writes the run
        job_id = item.spec.job_id
        if not finished.lost or self.tries.get(job_id, 0) >= self.config.max_retries or self.interrupts.count:
            return False
        self.tries[job_id] = self.tries.get(job_id, 0) + 1
        self.events.write(JobRetry(job_id=job_id, reason=finished.error or f"exit code {finished.exitcode}"))
        return True

    def _record(self, item: PlannedJob, finished: Finished) -> None:
        record = record_for(item.spec, item.job, finished, run_id=self.run_id, attempt=item.attempt,
                            carried=item.carried, timeout=self.job_timeout, memory_mb=self.config.job_memory_mb,
                            interrupted=self.interrupts.stop_scheduling, carried_measure=item.carried_measure)
        meta = JobMeta.planned(item.spec, self.run_id, item.attempt).ended(record)
        item.job.write_meta(meta.model_copy(update={"node_id": finished.node_id}) if finished.node_id else meta)
        self.store.record_result(item.job, record)  # after the meta: a crash between them leaves no record: it re-runs
        self.tables.add(record)
        self.tables.maybe_write()
        self.failed_seen = self.failed_seen or record.status not in SUCCESSFUL
        if record.key_refused is not None and self.key_refused is None:
            self.key_refused = record.key_refused
            self.console.line(f"the provider refused the key in {record.key_refused.key_variable}: "
                              "no new job starts (running ones finish)")
        self.console.finished(record)
        self.events.write(JobEnded(job_id=record.job_id, status=record.status, score_best=record.score_best,
                                   time_seconds=record.time_seconds, done=self.console.done,
                                   total=self.console.total))


def launch_args(spec: JobSpec, run_id: str, carried: Spend | None, attempt: int, *,
                carried_measure: Spend | None = None) -> dict[str, Any]:
    """What the job body (``trace_bench.runner.job.body.job_body``) is handed: plain JSON."""
    return {"spec": spec.model_dump(mode="json"), "run_id": run_id,
            "carried": None if carried is None else carried.model_dump(mode="json"), "attempt": attempt,
            "carried_measure": None if carried_measure is None else carried_measure.model_dump(mode="json")}


def _entries_digest(meta: dict[str, Any], store: RunStore, statuses: dict[str, str], ids: list[str]) -> str:
    """What the manifest's entries are written from: the run's meta, each job's state, and the
    results index (its stamp changes with every record written, so with every resolved field)."""
    digest = hashlib.sha256(json.dumps([meta, store.results_index.stamp()], sort_keys=True, default=str).encode())
    digest.update("\n".join(f"{job_id} {statuses.get(job_id, '')}" for job_id in ids).encode())
    return digest.hexdigest()


def carried_entries(store: RunStore, jobs: list[JobSpec], listed: list[str] | None) -> list[ManifestJob]:
    """Entries of the run's manifest that this matrix lacks (cells of an earlier config of an
    extended run, see :mod:`trace_bench.runner.extend`), with the same LLM identity: they stay in
    the run.  A cell of another model or mode is left out of the tables (its files stay)."""
    ids = {job.job_id for job in jobs}
    if listed is None or set(listed) <= ids:
        return []  # nothing beyond this matrix: no need to build the manifest's entries
    identity = jobs[0].llm_identity if jobs else None
    try:  # the entries themselves, read only for a run extended beyond this matrix
        return [entry for entry in store.manifest_entries() if entry.job_id not in ids
                and entry.spec.llm_identity == identity]
    except StoreError:
        return []


def _record_skipped(item: PlannedJob, store: RunStore) -> JobResult:
    """The record of a job whose task cannot run here: written like any other, never executed."""
    item.job.root.mkdir(parents=True, exist_ok=True)
    record = salvage_record(item.spec, item.job, run_id=store.run_id, status=Status.SKIPPED,
                            error=item.spec.skip_reason or "skipped", wall_s=0.0, attempt=1, phase="plan")
    item.job.write_meta(JobMeta.planned(item.spec, store.run_id).ended(record))
    store.record_result(item.job, record)
    return record


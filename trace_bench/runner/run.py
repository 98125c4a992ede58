"""Orchestrate a run: plan, write meta, schedule job processes, keep the tables up to date.

The driver process never imports ``opto``; it only plans, schedules and writes files.  Every
file it writes is atomic, per-job ``results.json`` is the source of truth, and a run killed at
any instant is completed by resuming it (each job exactly once).
"""

from __future__ import annotations

import signal
import threading
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from trace_bench.config.errors import ConfigError
from trace_bench.config.models import RunConfig
from trace_bench.llm.credentials import check_credentials
from trace_bench.matrix.expand import JobSpec, expand_matrix
from trace_bench.matrix.identity import config_hash, new_run_id
from trace_bench.registry.tasks import TaskCatalog
from trace_bench.runner.job import write_job_meta
from trace_bench.runner.plan import SUCCESS, PlannedJob, ResumeMode, plan_jobs, prepare_attempt
from trace_bench.runner.progress import ConsoleProgress
from trace_bench.runner.salvage import salvage_record
from trace_bench.store.atomic import read_json, write_json, write_text
from trace_bench.store.events import EventLog, utc_now
from trace_bench.store.run_dir import RunPaths, environment_info, git_info, write_files_index
from trace_bench.store.schemas import JobResult
from trace_bench.store.tables import ResultTables


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


@dataclass
class RunOutcome:
    run_id: str
    run_dir: Path
    records: list[JobResult]
    interrupted: bool = False
    not_run: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if self.interrupted or self.not_run:
            return 1
        return 0 if all(r.status in SUCCESS or r.status == "skipped" for r in self.records) else 1


def snapshot_text(config: RunConfig) -> str:
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True)


def locate_run(reference: str, runs_dir: str) -> Path:
    """A run given by path or id; ConfigError when it is not a run directory."""
    candidates = [Path(reference), Path(runs_dir) / reference]
    for candidate in candidates:
        if (candidate / "meta" / "manifest.json").exists() or (candidate / "meta" / "config.snapshot.yaml").exists():
            return candidate.resolve()
    raise ConfigError(f"no run '{reference}' (looked for meta/manifest.json in {', '.join(map(str, candidates))})",
                      key_path="--resume")


def manifest_entry(spec: JobSpec, status: str = "pending") -> dict[str, Any]:
    return {
        "job_id": spec.job_id, "index": spec.index, "task": spec.task, "suite": spec.suite, "trainer": spec.trainer,
        "params": spec.params, "params_label": spec.params_label, "seed": spec.seed, "eval_kwargs": spec.eval_kwargs,
        "raw_params": spec.params,
        "resolved": {"trainer_kwargs": spec.trainer_kwargs, "optimizer": spec.optimizer or "OptoPrime",
                     "optimizer_kwargs": spec.optimizer_kwargs, "logger": spec.logger},
        "llm_identity": spec.llm_identity, "status": status,
        **({"skip_reason": spec.skip_reason} if spec.skip_reason else {}),
    }


class _Interrupts:
    """First Ctrl-C: stop scheduling; second: kill running jobs. The run stays resumable."""

    def __init__(self, progress: ConsoleProgress) -> None:
        self.count = 0
        self.progress = progress
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> _Interrupts:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    def _handle(self, signum: int, frame: Any) -> None:
        self.count += 1 if signum == signal.SIGINT else 2
        if self.count == 1:
            self.progress.line("interrupt: no new jobs will start; running jobs finish (Ctrl-C again to kill them)")
        else:
            self.progress.line("interrupt: killing running jobs; resume later with --resume")

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)


def execute_run(config: RunConfig, options: RunOptions) -> RunOutcome:
    from trace_bench.execution.local import warm_up

    runs_dir = options.runs_dir or config.runs_dir
    if options.max_workers is not None:
        config = config.model_copy(update={"max_workers": max(1, options.max_workers)})
    resume: ResumeMode = "none" if options.force else (options.resume or config.resume)
    if options.resume_run and not options.root:  # a run remembers the task root it was started with
        stored = _read_manifest(locate_run(options.resume_run, options.runs_dir or config.runs_dir)).get("task_root")
        if stored and Path(stored).is_dir():
            options.root = stored
    catalog = TaskCatalog.create(options.root)
    jobs = expand_matrix(config, catalog, logger_override=options.logger)
    check_credentials(config)  # before any file or job: a missing key is a config error, not N failed jobs
    digest = config_hash(config)
    warm_up()  # the template imports opto while the driver writes meta files

    if options.resume_run:
        run_dir = locate_run(options.resume_run, runs_dir)
        manifest = _read_manifest(run_dir)
        if manifest.get("config_hash") not in (None, digest):
            raise ConfigError("the config differs from the one the run was started with "
                              f"(config_hash {manifest.get('config_hash', '?')[:12]} != {digest[:12]}); "
                              "resume with the run's own config (omit --config) or start a new run",
                              key_path="--resume")
        run_id = run_dir.name
    else:
        run_id = config.run_id or new_run_id(digest)
        run_dir = Path(runs_dir) / run_id
        previous = _read_manifest(run_dir).get("config_hash")
        if previous is not None and previous != digest and not _read_manifest(run_dir).get("validated_only"):
            raise ConfigError(f"run {run_id} in {runs_dir} was started with a different config (config_hash "
                              f"{previous[:12]} != {digest[:12]}); give it a new run_id or delete that run",
                              key_path="run_id")
    paths = RunPaths(run_dir)
    paths.meta.mkdir(parents=True, exist_ok=True)
    paths.jobs.mkdir(exist_ok=True)
    lock = _lock_run(paths)
    try:
        return _execute(config, options, jobs, digest, run_id, paths, resume)
    except OSError as exc:
        raise RunWriteError(f"cannot write run {run_id} in {paths.root}: {exc}. Free space, then continue it "
                            f"with: trace-bench run --resume {paths.root}") from exc
    finally:
        lock.close()


class RunWriteError(OSError):
    """The run directory could not be written (disk full, permissions); the run stays resumable."""


def _lock_run(paths: RunPaths) -> Any:
    """Hold an exclusive lock on the run for the driver's lifetime (released when it dies)."""
    import fcntl

    handle = open(paths.root / ".lock", "a+")  # noqa: SIM115 - held until the run ends
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        handle.close()
        raise ConfigError(f"run {paths.root.name} is being executed by another trace-bench process",
                          key_path="--resume") from None
    return handle


def make_executor(config: RunConfig, options: RunOptions) -> Any:
    kind = options.executor or config.executor
    if kind == "ray":
        try:
            from trace_bench.execution.ray_executor import RayExecutor
        except ImportError as exc:  # pragma: no cover - ray is an optional extra
            raise ConfigError(f"executor ray needs the ray extra (pip install 'trace-bench[ray]'): {exc}") from None
        ray_cfg = config.ray
        return RayExecutor(config.max_workers, address=options.ray_address or ray_cfg.address,
                           num_cpus=ray_cfg.num_cpus, num_gpus=ray_cfg.num_gpus, memory_mb=ray_cfg.memory_mb,
                           max_retries=config.max_retries)
    from trace_bench.execution.local import LocalExecutor

    return LocalExecutor(config.max_workers)


def _execute(config: RunConfig, options: RunOptions, jobs: list[JobSpec], digest: str, run_id: str,
             paths: RunPaths, resume: ResumeMode) -> RunOutcome:
    run_dir = paths.root
    created = _read_manifest(run_dir).get("created_at") or utc_now()
    job_timeout = options.job_timeout if options.job_timeout is not None else config.job_timeout
    meta = {"run_id": run_id, "config_hash": digest, "mode": config.mode, "tags": config.tags,
            "total_jobs": len(jobs), "created_at": created,
            "task_root": str(Path(options.root).resolve()) if options.root else None}
    write_text(paths.snapshot, snapshot_text(config))
    write_json(paths.env, environment_info())
    write_json(paths.git, git_info())
    _write_manifest(paths, meta, jobs, {})

    plan = plan_jobs(jobs, paths, resume)
    tables = ResultTables(paths, meta)
    tables.set_order([j.job_id for j in jobs])
    for item in plan:
        if item.spec.skip_reason and item.previous is None:
            tables.add(_record_skipped(item, run_id))
        elif item.previous is not None and not item.run:
            tables.add(item.previous)
    to_run = [item for item in plan if item.run]
    progress = ConsoleProgress(len(jobs), quiet=options.quiet)
    progress.done = len(jobs) - len(to_run)
    run_events = EventLog(paths.events)
    run_events.write({"type": "run_started", "run_id": run_id, "config_hash": digest, "total_jobs": len(jobs),
                      "to_run": len(to_run), "resume": resume, "max_workers": config.max_workers})
    progress.line(f"run {run_id}: {len(jobs)} jobs, {len(to_run)} to run, {config.max_workers} worker(s) -> {run_dir}")
    for task, reason in sorted({(j.task, j.skip_reason) for j in jobs if j.skip_reason}):
        progress.line(f"warning: {task}: {reason}; its jobs are recorded as skipped")

    try:
        executor = make_executor(config, options)
        tries: dict[str, int] = {}
        pending = list(to_run)
        by_id: dict[str, PlannedJob] = {item.spec.job_id: item for item in to_run}
        failed_seen = False
        with _Interrupts(progress) as interrupts:
            while pending or executor.running:
                stop = interrupts.count >= 1 or (config.fail_fast and failed_seen)
                while pending and executor.free_slots > 0 and not stop:
                    item = pending.pop(0)
                    prepare_attempt(item, fresh=resume == "none")
                    write_job_meta(item.paths, item.spec, run_id, item.attempt)
                    payload = {"spec": item.spec.to_dict(), "job_dir": str(item.paths.root), "run_id": run_id,
                               "carried": item.carried, "attempt": item.attempt, "memory_mb": config.job_memory_mb}
                    executor.submit(item.spec.job_id, payload, job_timeout)
                    progress.started(item.spec.job_id, item.spec.task, item.spec.trainer, job_dir=item.paths.root)
                    run_events.write({"type": "job_started", "job_id": item.spec.job_id, "task": item.spec.task,
                                      "trainer": item.spec.trainer, "seed": item.spec.seed})
                if interrupts.count >= 2 and executor.running:
                    executor.kill_all("interrupted")
                if stop and not executor.running:
                    break
                for finished in executor.poll(0.5):
                    item = by_id[finished.job_id]
                    _write_returned_files(item, finished.extra.get("files"))
                    if _worker_lost(finished) and tries.get(item.spec.job_id, 0) < config.max_retries \
                            and interrupts.count == 0:
                        tries[item.spec.job_id] = tries.get(item.spec.job_id, 0) + 1
                        run_events.write({"type": "job_retry", "job_id": item.spec.job_id,
                                          "reason": finished.extra.get("error") or f"exit code {finished.exitcode}"})
                        pending.insert(0, item)
                        continue
                    record = _record_for(item, finished, run_id, job_timeout, config.job_memory_mb,
                                          interrupted=interrupts.count >= 1)
                    write_json(item.paths.results, record.model_dump(mode="json"))
                    tables.add(record)
                    tables.maybe_write()
                    failed_seen = failed_seen or record.status not in SUCCESS
                    progress.finished(record)
                    run_events.write({"type": "job_finished", "job_id": record.job_id, "status": record.status,
                                      "score_best": record.score_best, "time_seconds": record.time_seconds,
                                      "done": progress.done, "total": len(jobs)})
            interrupted = interrupts.count >= 1 and bool(pending)
        not_run = [item.spec.job_id for item in plan if item.spec.job_id not in tables.records]
        tables.write()
        statuses = {r.job_id: r.status for r in tables.records.values()}
        _write_manifest(paths, meta, jobs, statuses)
        run_events.write({"type": "run_finished", "run_id": run_id, "counts": tables.summary(tables.sorted_records())["counts"],
                          "not_run": len(not_run), "interrupted": interrupted})
    finally:
        progress.close()
    run_events.close()
    from trace_bench.trackers import active_trackers, export_run

    trackers = active_trackers(config.trackers)
    if trackers:
        export_run(paths.root, trackers)
    write_files_index(paths)
    return RunOutcome(run_id, run_dir, tables.sorted_records(), interrupted=interrupted, not_run=not_run)


def _record_skipped(item: PlannedJob, run_id: str) -> JobResult:
    """The record of a job whose task cannot run here: written like any other, never executed."""
    item.paths.root.mkdir(parents=True, exist_ok=True)
    write_job_meta(item.paths, item.spec, run_id)
    record = salvage_record(item.spec, item.paths, run_id=run_id, status="skipped",
                            error=item.spec.skip_reason or "skipped", wall_s=0.0, attempt=1)
    write_json(item.paths.results, record.model_dump(mode="json"))
    return record


def _worker_lost(finished: Any) -> bool:
    return finished.record is None and finished.killed_reason is None


def _write_returned_files(item: PlannedJob, files: dict[str, bytes] | None) -> None:
    """Files a remote job sent back (Ray): the driver alone writes the run directory."""
    if not files:
        return
    from trace_bench.store.atomic import write_bytes

    for relative, data in files.items():
        target = (item.paths.root / relative).resolve()
        if item.paths.root.resolve() not in target.parents:
            continue  # never write outside the job dir
        write_bytes(target, data, durable=False)


def _record_for(item: PlannedJob, finished: Any, run_id: str, timeout: float | None, memory_mb: int | None,
                interrupted: bool = False) -> JobResult:
    if finished.record is not None and finished.killed_reason is None:
        return JobResult.model_validate(finished.record)
    if finished.killed_reason == "timeout":
        status, error = "timeout", f"job_timeout: exceeded {timeout:g}s (process group killed)"
    elif finished.killed_reason == "interrupted" or (interrupted and finished.record is None):
        # A job that died without a result after Ctrl-C went down with the interrupt, not on its own.
        status, error = "interrupted", "interrupted by the user (resume to run it again)"
    elif finished.exitcode is not None and finished.exitcode < 0 and memory_mb and finished.exitcode == -9:
        status, error = "oom", f"killed (signal 9) with job_memory_mb={memory_mb}"
    else:
        code = finished.exitcode
        status, error = "failed", finished.extra.get("error") or \
            f"worker lost: job process exited with code {code} without a result"
    return salvage_record(item.spec, item.paths, run_id=run_id, status=status, error=error, wall_s=finished.wall_s,
                          attempt=item.attempt, carried=item.carried)


def _read_manifest(run_dir: Path) -> dict[str, Any]:
    try:
        data = read_json(run_dir / "meta" / "manifest.json")
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write_manifest(paths: RunPaths, meta: dict[str, Any], jobs: list[JobSpec], statuses: dict[str, str]) -> None:
    write_json(paths.manifest, {
        "schema_version": 1, **meta, "generated_at": utc_now(),
        "jobs": [manifest_entry(spec, statuses.get(spec.job_id, "not_executed" if statuses else "pending"))
                 for spec in jobs],
    })



"""Orchestrate a run: open (or resume) its directory, expand the matrix, schedule the jobs.

The driver process never imports ``opto``; it plans, schedules and writes files through the
store.  Order matters for what a kill or a Ctrl-C leaves behind: the signal handlers are
installed first, then the run directory is created and locked with its config snapshot, and only
then does anything slow happen (expanding a large matrix, starting the job template, writing
``env.json``).  A kill at any instant after the lock therefore leaves a run that
``--resume`` completes, each job exactly once.
"""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

from trace_bench._util.errors import ConfigError, TraceBenchError
from trace_bench.config.defaults import effective_job_timeout
from trace_bench.config.models import RunConfig
from trace_bench.llm.credentials import check_credentials, register_keys, unset_key_variables
from trace_bench.matrix.expand import JobSpec, expand_matrix
from trace_bench.matrix.identity import config_hash, new_run_id
from trace_bench.registry.tasks import TaskCatalog
from trace_bench.runner.driver import drive
from trace_bench.runner.executors import connect_executor
from trace_bench.runner.extend import admit, pooled_tasks
from trace_bench.runner.interrupts import InterruptHandler
from trace_bench.runner.manifest import snapshot_text
from trace_bench.runner.options import OpenedRun, RunOptions, RunOutcome
from trace_bench.runner.plan import ResumeMode
from trace_bench.runner.race import check_first_round
from trace_bench.store.events import utc_now
from trace_bench.store.models import Manifest, StoreError
from trace_bench.store.run_store import RunLocked, RunNotFound, RunStore

__all__ = ["RunOptions", "RunOutcome", "RunWriteError", "execute_run", "locate_run", "open_run", "plan_run_id"]


class RunWriteError(TraceBenchError, OSError):
    """The run directory could not be written (disk full, permissions); the run stays resumable."""


def locate_run(reference: str, runs_dir: str) -> Path:
    """A run given by path or id; ConfigError when it is not a run directory."""
    try:
        return RunStore.locate(reference, runs_dir).root
    except RunNotFound as exc:
        raise ConfigError(str(exc), key_path="--resume") from None


def plan_run_id(config: RunConfig) -> str:
    """The id a new run of ``config`` gets: the config's ``run_id``, else a fresh timestamped one."""
    return config.run_id or new_run_id(config_hash(config))


def open_run(config: RunConfig, options: RunOptions, store: RunStore | None = None,
             listing: tuple[Manifest, list[str]] | None | bool = False) -> OpenedRun:
    """The run directory, created (or found, when resuming), locked, with its config snapshot and a
    manifest that names its config hash: from here on, ``--resume`` can complete the run.

    ``store`` and ``listing`` (its manifest's head and job ids): what the caller located and read
    already (:func:`execute_run` does, once); found and read here when not given."""
    runs_dir = options.runs_dir or config.runs_dir
    if store is None:
        store = _run_store(config, options)
    if listing is False:
        listing = _listing_or_none(store)
    assert listing is not True
    manifest = listing[0] if listing else None
    admission = admit(config, manifest, _snapshot_or_none(store) if manifest is not None else None)
    if admission is None:
        assert manifest is not None
        digest = config_hash(config)
        rule = "only tasks, trainers and seeds may be added to a run"
        if options.resume_run:
            raise ConfigError("the config differs from the one the run was started with "
                              f"(config_hash {manifest.config_hash[:12]} != {digest[:12]}) beyond its matrix; "
                              f"{rule}: resume with the run's own config (omit --config) or start a new run",
                              key_path="--resume")
        raise ConfigError(f"run {store.run_id} in {runs_dir} was started with a different config (config_hash "
                          f"{manifest.config_hash[:12]} != {digest[:12]}); {rule}: give it a new run_id or "
                          "delete that run", key_path="run_id")
    digest = admission.digest
    created = not store.exists()
    runs_dir_created = not store.root.parent.exists()
    try:
        store = RunStore.create(store.root.parent, store.run_id)
        lock = store.lock()
    except RunLocked as exc:
        raise ConfigError(str(exc), key_path="--resume") from None
    except OSError as exc:  # a read-only or missing location: nothing ran, a usage error (exit 2)
        raise ConfigError(f"cannot create the run directory {store.root}: {exc.strerror or exc}",
                          key_path="--runs-dir", hint="choose a writable directory with --runs-dir") from None
    try:
        created_at = (manifest.created_at if manifest is not None else "") or utc_now()
        if not admission.extended:  # an extension's snapshot waits for its matrix to pass pooled_tasks
            store.write_snapshot(snapshot_text(config, options.overrides, options.config_path))
        if manifest is None or manifest.validated_only:
            store.write_manifest(Manifest(run_id=store.run_id, config_hash=digest, mode=config.mode,
                                          tags=config.tags, created_at=created_at, generated_at=utc_now(),
                                          task_root=_task_root(options), config_hashes=admission.hashes))
    except BaseException:
        lock.release()
        raise
    if manifest is None or manifest.validated_only:  # written just now: no job entries yet
        listed, entries_digest = None, None
    else:
        listed, entries_digest = (listing[1] if listing else None), manifest.entries_digest
    return OpenedRun(store, lock, digest, created, created_at, _task_root(options), runs_dir_created=runs_dir_created,
                     config_hashes=admission.hashes,
                     extended=admission.extended, listed=listed, entries_digest=entries_digest)


def _run_store(config: RunConfig, options: RunOptions) -> RunStore:
    """The run this command writes: the one ``--resume`` names (located here, the only time), or a
    new one under the runs directory."""
    runs_dir = options.runs_dir or config.runs_dir
    if options.resume_run:
        return RunStore(locate_run(options.resume_run, runs_dir))
    return RunStore(Path(runs_dir) / plan_run_id(config))


def execute_run(config: RunConfig, options: RunOptions, interrupts: InterruptHandler | None = None) -> RunOutcome:
    """Run (or resume) ``config``.  ``interrupts``: handlers the caller installed even earlier (the
    CLI does, before it imports anything slow); otherwise they are installed here, first."""
    if interrupts is None:
        with InterruptHandler(quiet=options.quiet) as own:
            return _execute_run(config, options, own)
    return _execute_run(config, options, interrupts)


def _execute_run(config: RunConfig, options: RunOptions, interrupts: InterruptHandler) -> RunOutcome:
    if options.max_workers is not None:
        config = config.model_copy(update={"max_workers": max(1, options.max_workers)})
    resume: ResumeMode = "none" if options.force else (options.resume or config.resume)
    found = _run_store(config, options) if options.resume_run else None  # located once per command
    listing: tuple[Manifest, list[str]] | None | bool = False  # False: no run to read
    if found is not None:
        listing = read = _listing_or_none(found)  # its manifest read once
        if read and not options.root:  # a run remembers the task root it was started with
            stored = read[0].task_root
            if stored and Path(stored).is_dir():
                options.root = stored
    register_keys(config.llm)  # masked in the driver's files and console from here
    check_credentials(config)  # before any file or job: a missing key is a config error, not N failed jobs
    for warning in unset_key_variables(config):
        print(f"trace-bench: warning: {warning}", file=sys.stderr, flush=True)
    checks = _preflight(config, options)  # a refused key or a server that is down: exit 2, no job, no run
    connect_executor(config, options.executor, options.ray_address)
    opened = open_run(config, options, found, listing)
    opened.preflight = checks
    store = opened.store
    try:
        if (options.executor or config.executor) == "local":
            from trace_bench.runner.warm import preload_for, start_job_template, template_trainers

            # (a no-op when the CLI started it) imports opto while the driver expands
            start_job_template(preload_for(config), template_trainers([entry.id for entry in config.trainers]))
        jobs = _expand(config, options, opened)
        job_timeout = effective_job_timeout(config, options.job_timeout)
        return drive(config, options, jobs, store, opened, resume, job_timeout, interrupts)
    except OSError as exc:
        raise RunWriteError(f"cannot write run {store.run_id} in {store.root}: {exc}. Free space, then continue "
                            f"it with: trace-bench run --resume {shlex.quote(str(store.root))}") from exc
    finally:
        opened.lock.release()


def _preflight(config: RunConfig, options: RunOptions) -> list[dict[str, Any]]:
    """One cheap request per distinct (endpoint, model, key variable) of a real run
    (:mod:`trace_bench.llm.preflight`); :class:`~trace_bench.llm.preflight.PreflightError` when
    one fails.  The checks, for the run's events."""
    if options.no_preflight or config.mode != "real":  # a stub run has no provider (nor urllib's import)
        return []
    from trace_bench.llm.preflight import run_preflight, skip_reason

    if skip_reason(config):
        return []
    checks = run_preflight(config.llm.model_dump(mode="json"))
    for check in checks:  # shown even with --quiet: the run accepted something a user should know
        if check.warning:
            print(f"trace-bench: warning: preflight: {check.warning}", file=sys.stderr, flush=True)
    if not options.quiet:
        for check in checks:
            how = "model listed" if check.method == "models" else "one-token completion"
            print(f"preflight: {check.endpoint} model {check.model} ({check.key_variable}): ok, {how} in "
                  f"{check.latency_s:.2f} s", file=sys.stderr, flush=True)
    return [check.model_dump(exclude={"ts", "type"}) for check in checks]


def _expand(config: RunConfig, options: RunOptions, opened: OpenedRun) -> list[JobSpec]:
    """The matrix; a config error in a run created by this call leaves no run directory behind, and
    one that extends a run leaves it as it was (its snapshot is written only once the extension is
    admitted: it never pools two tasks under one label, :func:`~trace_bench.runner.extend.pooled_tasks`)."""
    try:
        jobs = expand_matrix(config, TaskCatalog.create(options.root), logger_override=options.logger)
        check_first_round(config, jobs)
        if opened.extended:
            if config.race is not None:  # its rounds were planned over the run's matrix and seeds
                raise ConfigError(f"run {opened.store.run_id} races its seeds and cannot be extended with other "
                                  "tasks, trainers or seeds", key_path="race",
                                  hint="resume it with its own config, or start a new run")
            _refuse_pooling(opened.store, jobs)
            opened.store.write_snapshot(snapshot_text(config, options.overrides, options.config_path))
        return jobs
    except ConfigError as exc:
        if not opened.created:  # a run that exists: a trainer it used may be missing here now
            raise _missing_trainer(exc, opened.store) from None
        opened.lock.release()
        # a config error writes nothing, not even an empty runs directory
        opened.store.remove(with_runs_dir=opened.runs_dir_created)
        raise


def _refuse_pooling(store: RunStore, jobs: list[JobSpec]) -> None:
    """ConfigError (exit 2) when extending the run with ``jobs`` would pool or split a task."""
    try:
        existing = [entry.spec for entry in store.manifest_entries()]
    except StoreError:
        return
    reasons = pooled_tasks(existing, jobs)
    if reasons:
        raise ConfigError(f"run {store.run_id} cannot be extended with this config: " + "; ".join(reasons),
                          key_path="tasks", hint="start a new run for it: another run_id, or no --resume; in one "
                          "run that names every variant, each eval_kwargs variant of a task gets its own label")


def _missing_trainer(exc: ConfigError, store: RunStore) -> ConfigError:
    """``exc`` naming where a trainer the run used came from, when it is that trainer that cannot
    be found now (a plugin package uninstalled since, a module not on the path from here)."""
    try:
        env = store.read_env()
    except StoreError:
        return exc
    for trainer_id, origin in (env.trainers if env is not None else {}).items():
        if f"'{trainer_id}'" in exc.reason:
            how = ("install it into .venv again (uv pip install --python .venv PACKAGE or the path of its source; "
                   "see docs/adding-trainer.md)" if origin.startswith("package") else
                   "run from the directory that holds it, or add that directory to PYTHONPATH")
            return ConfigError(f"{exc.reason}; the run used trainer '{trainer_id}' from {origin}",
                               file=exc.file, key_path=exc.key_path, hint=how)
    return exc


def _listing_or_none(store: RunStore) -> tuple[Manifest, list[str]] | None:
    """The run's manifest head and job ids (its entries are not needed to open it, and are many)."""
    try:
        return store.read_manifest_listing()
    except StoreError:
        return None


def _snapshot_or_none(store: RunStore) -> object:
    try:
        return store.read_snapshot()
    except StoreError:
        return None


def _task_root(options: RunOptions) -> str | None:
    return str(Path(options.root).resolve()) if options.root else None

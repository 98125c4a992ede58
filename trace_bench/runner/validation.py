"""What ``trace-bench validate`` checks, as data the CLI prints.

Without ``strict``: the config expands into a matrix (trainers resolved, tasks found, unavailable
tasks named), and each task that runs LLM-written code learns whether its sandbox can start here
(under the config's ``sandbox`` setting: bubblewrap, the allowed weak mode, or a failure with the fix).  With ``strict``: every distinct task is also built in this process and its trainable
parameters counted, and a run directory with the config snapshot and a manifest (every job
``validated``) is written, so the matrix can be inspected before anything runs.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from trace_bench.config.models import RunConfig
from trace_bench.matrix.expand import JobSpec, expand_matrix
from trace_bench.matrix.identity import config_hash
from trace_bench.registry.tasks import TaskCatalog
from trace_bench.runner.manifest import manifest_entry, snapshot_text
from trace_bench.runner.race import check_first_round
from trace_bench.runner.run import plan_run_id
from trace_bench.store.events import utc_now
from trace_bench.store.models import Manifest
from trace_bench.store.run_store import RunStore
from trace_bench.store.status import PlanState


@dataclass(frozen=True)
class TaskCheck:
    task: str
    verdict: str  # OK, SKIP, FAIL or EXPECTED (task checks); OK, WARN or FAIL (sandbox checks)
    detail: str


@dataclass
class Validation:
    jobs: list[JobSpec]
    task_checks: list[TaskCheck] = field(default_factory=list)
    sandbox_checks: list[TaskCheck] = field(default_factory=list)  # OK, WARN (weak mode) or FAIL
    manifest_path: Path | None = None

    @property
    def trainers(self) -> list[str]:
        return sorted({j.trainer for j in self.jobs})

    @property
    def tasks(self) -> list[tuple[str, str | None]]:
        """Each task once, in matrix order, with the reason it is skipped here (or None)."""
        skipped = {j.task: j.skip_reason for j in self.jobs if j.skip_reason}
        return [(task, skipped.get(task)) for task in dict.fromkeys(j.task for j in self.jobs)]

    @property
    def failed(self) -> bool:
        return any(check.verdict == "FAIL" for check in (*self.sandbox_checks, *self.task_checks))


def validate_config(config: RunConfig, *, root: str | None = None, benches: list[str] | None = None,
                    strict: bool = False, runs_dir: str | None = None,
                    overrides: Sequence[tuple[str, str]] = (), source: str | None = None) -> Validation:
    """What ``validate`` found; with ``strict`` a validation run directory whose snapshot names
    ``source`` and the command-line ``overrides`` the config was resolved with."""
    if benches:
        config = config.model_copy(update={"tasks": [t for t in config.tasks if _suite(t.id) in benches]})
    catalog = TaskCatalog.create(root)
    validation = Validation(expand_matrix(config, catalog))
    check_first_round(config, validation.jobs)
    validation.sandbox_checks = check_sandbox(validation.jobs, catalog, config)
    if strict:
        validation.task_checks = check_tasks(validation.jobs)
        validation.manifest_path = write_validation_manifest(config, validation.jobs, runs_dir or config.runs_dir,
                                                             overrides, source)
    return validation


def check_tasks(jobs: list[JobSpec]) -> list[TaskCheck]:
    """Build each distinct (task, eval_kwargs) once, in this process, and count its trainable
    parameters: in-job code (:mod:`trace_bench.runner.job.check`), named here by module path so
    that the driver imports no task or trainer code."""
    check = importlib.import_module("trace_bench.runner.job.check")
    return [TaskCheck(*verdict) for verdict in check.check_problems(jobs)]


def check_sandbox(jobs: list[JobSpec], catalog: TaskCatalog, config: RunConfig) -> list[TaskCheck]:
    """For each runnable task that runs LLM-written code: can its sandbox start here (starting it now)?"""
    needing = [task for task in dict.fromkeys(j.task for j in jobs if not j.skip_reason)
               if "sandbox" in catalog.get(task).tags]
    if not needing:
        return []
    from trace_bench import sandbox

    sandbox.allow_weak(config.sandbox == "weak")
    found = sandbox.availability()
    if found["mode"] == "bwrap":
        return [TaskCheck(task, "OK", "runs LLM-written code in the bubblewrap sandbox") for task in needing]
    if found["mode"] == "weak":
        return [TaskCheck(task, "WARN", "runs LLM-written code in the WEAK sandbox (bubblewrap unavailable; "
                                        "recorded in the run)") for task in needing]
    return [TaskCheck(task, "FAIL", found["reason"]) for task in needing]


def write_validation_manifest(config: RunConfig, jobs: list[JobSpec], runs_dir: str,
                              overrides: Sequence[tuple[str, str]] = (), source: str | None = None) -> Path:
    """A run directory holding only the snapshot and a ``validated_only`` manifest."""
    store = RunStore.create(runs_dir, plan_run_id(config))
    store.write_snapshot(snapshot_text(config, overrides, source))
    store.write_manifest(Manifest(run_id=store.run_id, config_hash=config_hash(config), mode=config.mode,
                                  tags=config.tags, total_jobs=len(jobs), created_at=utc_now(),
                                  validated_only=True,
                                  jobs=[manifest_entry(job, PlanState.VALIDATED) for job in jobs]))
    return store.manifest_path


def _suite(task_id: str) -> str:
    return task_id.split(":", 1)[0] if ":" in task_id else "llm4ad"

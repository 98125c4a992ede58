"""The original ``trace_bench.matrix`` API: ``expand_matrix(config)`` and ``compute_job_id``.

``expand_matrix`` returns the jobs our runner would run, each seen through :class:`LegacyJob`,
which answers the original's attribute names (``task`` and ``trainer`` are entries with ``.id``
and ``.eval_kwargs`` / ``.params_variants``; ``resolved_kwargs`` groups the resolved settings)
and every attribute of our :class:`~trace_bench.matrix.expand.JobSpec`.  Job ids are ours: they
also cover the mode and the LLM, so they differ from the original's ids for the same cell.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from trace_bench.config.models import RunConfig, TaskEntry, TrainerEntry
from trace_bench.matrix.expand import JobSpec, resolve_variant
from trace_bench.matrix.expand import expand_matrix as expand_jobs
from trace_bench.matrix.identity import job_id


@dataclass
class LegacyJob:
    spec: JobSpec

    @property
    def task(self) -> TaskEntry:
        return TaskEntry(id=self.spec.task, eval_kwargs=dict(self.spec.eval_kwargs))

    @property
    def trainer(self) -> TrainerEntry:
        return TrainerEntry(id=self.spec.trainer, params_variants=[dict(self.spec.params)],
                            optimizer=self.spec.optimizer, optimizer_kwargs=dict(self.spec.optimizer_kwargs),
                            logger=self.spec.logger)

    @property
    def task_id(self) -> str:
        return self.spec.task

    @property
    def trainer_id(self) -> str:
        return self.spec.trainer

    @property
    def resolved_kwargs(self) -> dict[str, Any]:
        return {"trainer_kwargs": dict(self.spec.trainer_kwargs), "optimizer": self.spec.optimizer,
                "optimizer_kwargs": dict(self.spec.optimizer_kwargs), "guide": None, "guide_kwargs": {},
                "logger": self.spec.logger, "logger_kwargs": {}, "eval_kwargs": dict(self.spec.eval_kwargs)}

    def __getattr__(self, name: str) -> Any:
        return getattr(self.spec, name)


def expand_matrix(config: RunConfig | dict[str, Any], catalog: Any = None, *,
                  logger_override: str | None = None) -> list[LegacyJob]:
    """Tasks x trainers x params variants x seeds; the catalog defaults to the built-in suites
    (plus ``benchmarks/LLM4AD/benchmark_tasks`` when the current directory has it)."""
    from trace_bench.config.loader import parse_config
    from trace_bench.registry.tasks import TaskCatalog

    if isinstance(config, dict):
        config = parse_config(config)
    jobs = expand_jobs(config, catalog or TaskCatalog.create(), logger_override=logger_override)
    return [LegacyJob(job) for job in jobs]


def compute_job_id(task_id: str, trainer_id: str, resolved_kwargs: dict[str, Any], seed: int, *,
                   llm: dict[str, Any] | None = None) -> str:
    """The job id of one cell.  ``resolved_kwargs`` is either the original's resolved shape
    (``{"trainer_kwargs": ..., "optimizer": ..., "eval_kwargs": ...}``) or a params variant, which is
    resolved like a config's; ``llm`` is the LLM identity (default: stub mode)."""
    identity = llm or {"mode": "stub"}
    if "trainer_kwargs" in resolved_kwargs:
        trainer_kwargs = dict(resolved_kwargs["trainer_kwargs"])
        optimizer = resolved_kwargs.get("optimizer")
        optimizer_kwargs = dict(resolved_kwargs.get("optimizer_kwargs") or {})
        eval_kwargs = dict(resolved_kwargs.get("eval_kwargs") or {})
    else:
        trainer_id, trainer_kwargs, optimizer, optimizer_kwargs, _ = resolve_variant(
            TrainerEntry(id=trainer_id), dict(resolved_kwargs), {}, "compute_job_id")
        eval_kwargs = {}
    return job_id(task=task_id, eval_kwargs=eval_kwargs, trainer=trainer_id, trainer_kwargs=trainer_kwargs,
                  optimizer=optimizer, optimizer_kwargs=optimizer_kwargs, seed=seed, llm=identity)

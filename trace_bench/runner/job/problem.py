"""Build a job's problem through the task registry, turning load errors into job statuses: a task
that cannot be built is a ``task_error`` (unless its exception names another status, such as an
infrastructure failure), with the build's traceback kept as the cause."""

from __future__ import annotations

from typing import Any

from trace_bench.registry.tasks import TaskCatalog
from trace_bench.runner.job.failures import JobFailure, exception_text, status_of
from trace_bench.store.models import JobSpec
from trace_bench.store.status import Status
from trace_bench.tasks.problem import Problem, ProblemError


def load_problem(spec: JobSpec) -> Problem:
    catalog = TaskCatalog.create(spec.task_root)
    try:
        raw: Any = catalog.build(spec.task, spec.eval_kwargs)
    except NotImplementedError as exc:
        raise JobFailure(Status.SKIPPED, f"task_not_implemented: {exc}") from None
    except JobFailure:
        raise
    except Exception as exc:
        raise JobFailure(status_of(exc, Status.TASK_ERROR), f"task_load_error: {exception_text(exc)}") from exc
    try:
        return Problem.from_mapping(raw, spec.task)
    except ProblemError as exc:
        raise JobFailure(Status.TASK_ERROR, f"task_load_error: {exc}") from exc

"""``trace-bench validate --strict``'s task check: each task's problem built in this process, as a
job would build it, and its trainable parameters counted (the driver's :mod:`trace_bench.runner.validation`
names this module by path)."""

from __future__ import annotations

import contextlib
import io
import os
from typing import Any

from trace_bench.runner.job.body import prepare_process
from trace_bench.runner.job.failures import JobFailure
from trace_bench.runner.job.problem import load_problem
from trace_bench.store.models import JobSpec
from trace_bench.store.status import Status
from trace_bench.trainers.state import trainable_parameters

#: A task that is expected to have no trainable parameter (the harness's own negative control).
EXPECTED_WITHOUT_PARAMETERS = frozenset({"internal:non_trainable"})


def check_problems(jobs: list[JobSpec]) -> list[tuple[str, str, str]]:
    """``(task, verdict, detail)`` for each distinct (task, eval_kwargs), built once in this
    process: OK (with its count of trainable parameters), SKIP, FAIL or EXPECTED."""
    with contextlib.redirect_stdout(io.StringIO()):  # opto announces its LLM backend on import
        prepare_process()
        import opto.optimizers  # noqa: F401
    checks: list[tuple[str, str, str]] = []
    seen: set[str] = set()
    for job in jobs:
        key = f"{job.task}|{sorted(job.eval_kwargs.items())!r}"
        if key in seen or job.skip_reason:
            continue
        seen.add(key)
        previous_mode = os.environ.get("TRACE_BENCH_MODE")
        os.environ["TRACE_BENCH_MODE"] = job.mode  # as in the job body: a task may check only in real mode
        try:
            problem = load_problem(job)
        except JobFailure as exc:
            checks.append((job.task, "SKIP" if exc.status == Status.SKIPPED else "FAIL", str(exc)))
            continue
        finally:
            if previous_mode is None:
                os.environ.pop("TRACE_BENCH_MODE", None)
            else:
                os.environ["TRACE_BENCH_MODE"] = previous_mode
        count = len(trainable_parameters(problem.param))
        if count == 0:
            verdict = "EXPECTED" if job.task in EXPECTED_WITHOUT_PARAMETERS else "FAIL"
            checks.append((job.task, verdict, "no_trainable_parameters"))
        else:
            detail = f"{count} trainable parameter(s), selection on {problem.selection_split}"
            ignored = problem.metadata.get("ignored_config_text") or ", ".join(
                problem.metadata.get("ignored_config_keys") or ())
            if ignored:  # a task folder's config keys trace-bench does not use
                detail += f"; {problem.metadata.get('config_file') or 'config.yaml'} keys not used: {ignored}"
            checks.append((job.task, "OK", detail))
            checks += _task_checks(job.task, problem)
    return checks


def _task_checks(task: str, problem: Any) -> list[tuple[str, str, str]]:
    """What a task asks ``validate --strict`` to check beyond building it (a task folder: its
    dependencies, its evaluator importing in the sandbox; the problem's ``strict_checks``)."""
    check = problem.extras.get("strict_checks")
    if not callable(check):
        return []
    try:
        return [(task, str(verdict), str(detail)) for verdict, detail in check()]
    except Exception as exc:  # a check that cannot run is a failed check, never a crash of validate
        return [(task, "FAIL", f"{type(exc).__name__}: {exc}")]

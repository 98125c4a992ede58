"""veribench:* tasks: Python-to-Lean 4 translation scored by the Lean compiler.

Ids are ``veribench:<name>`` (the row's file name without extension, or ``task_<i>``);
``veribench:all`` expands to every task.  Listing reads only local data (``$TRACE_BENCH_VERIBENCH_ROOT``)
and never the network; any ``veribench:<name>`` is accepted (``eval_kwargs.data_dir`` or the HF
dataset may supply it at run time).  Every task needs ``lean`` on PATH (or ``lake`` with a Lake
project); without it the tasks are listed unavailable with the reason ``lean not found``.
See :mod:`.data` for the row schema and :mod:`.problem` for the scoring.
"""

from __future__ import annotations

import shutil
from dataclasses import replace

from trace_bench.tasks.spec import TaskSpec, Unavailable, UnavailableKind
from trace_bench.tasks.veribench.data import (
    ROOT_ENV,
    VeriBenchDataError,
    hf_cached,
    load_rows,
    local_location,
)

SUITE = "veribench"
_MODULE = "trace_bench.tasks.veribench.problem"
_SCORING = "0 unless it compiles; 0.5 compiled, +0.5 no sorry (or +0.25 no sorry, +0.25 x tests passed)"


def lean_available() -> Unavailable | None:
    return None if shutil.which("lean") or shutil.which("lake") else Unavailable(UnavailableKind.MISSING_TOOL,
                                                                                "lean not found")


def _spec(name: str, description: str) -> TaskSpec:
    return TaskSpec(id=f"{SUITE}:{name}", suite=SUITE, description=description, module=_MODULE,
                    parameter_kinds=("code",), scoring=_SCORING, needs=("lean",), availability=lean_available,
                    default_eval_kwargs={"task": name}, tags=("lean", "verification", "sandbox"))


def discover() -> list[TaskSpec]:
    """Tasks of the local data set; without one, the original's ``veribench:smoke_placeholder``
    (its availability says what is missing; ``veribench:all`` is never listed so it can expand)."""
    location = local_location()
    if location:
        try:
            return [_spec(row.name, f"Translate to Lean 4: {row.name}" + (f" ({row.category})" if row.category else ""))
                    for row in load_rows(location)]
        except VeriBenchDataError as exc:
            return [_placeholder(str(exc))]
    return [_placeholder(None if hf_cached() else f"no VeriBench data: set {ROOT_ENV} or eval_kwargs.data_dir")]


def _placeholder(problem: str | None) -> TaskSpec:
    def check() -> Unavailable | None:
        return lean_available() or (Unavailable(UnavailableKind.NO_DATA, problem) if problem else None)

    spec = _spec("smoke_placeholder", "VeriBench's first task (use veribench:all or veribench:<name>)")
    return replace(spec, availability=check, default_eval_kwargs={"task": "task_0"})


def expand(task_id: str) -> list[str]:
    """``veribench:all`` -> one id per row (local data, else the HF dataset, offline-aware); without
    any data, the placeholder, whose jobs are recorded skipped with the reason (as in the original)."""
    if task_id != f"{SUITE}:all":
        return []
    try:
        return [f"{SUITE}:{row.name}" for row in load_rows()] or [f"{SUITE}:smoke_placeholder"]
    except VeriBenchDataError:
        return [f"{SUITE}:smoke_placeholder"]


def resolve(task_id: str) -> TaskSpec | None:
    name = task_id.split(":", 1)[1]
    if not name or name == "all":
        return None
    if name == "smoke_placeholder":
        return _placeholder(None)
    return _spec(name, f"Translate to Lean 4: {name}")

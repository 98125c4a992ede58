"""hf:* tasks: prompt optimization on HuggingFace QA datasets (the original ``hf_qa`` suite).

Ids are ``hf:<dataset>`` and, for BBEH, ``hf:bbeh/<subtask>``; ``hf:bbeh`` expands to its 23
subtasks (``hf:bbeh_eight`` and ``hf:bbeh_horizon``, the original suite's curated subsets, to 8 each).  Listing reads the static catalog only (no ``datasets`` import, no network): a task is
unavailable when ``datasets`` is missing, or when the hub is switched off and the dataset is not in
the local datasets cache.  Such a task still builds from local files in the dataset's row schema
(eval_kwargs ``data_files``); :func:`available_with` is the check that knows about them.
"""

from __future__ import annotations

from typing import Any

from trace_bench._util.availability import Unavailable, UnavailableKind, missing_packages
from trace_bench.tasks.hf.catalog import DATASETS, HFDataset, cache_reason, split_task_id
from trace_bench.tasks.spec import TaskSpec

SUITE = "hf"
_MODULE = "trace_bench.tasks.hf.problem"

_NO_DATASETS = Unavailable(UnavailableKind.MISSING_PACKAGE, "missing datasets: install trace-bench[hf]")
_SCORING = {
    "hfqa": "answer containment (0/1)",
    "alias": "alias match, else token F1",
    "bbeh": "(X) option or exact match",
    "gsm8k": "final number == '####' number",
    "mcqa": "chosen option letter/text",
    "yesno": "first yes/no of the answer",
    "code": "unit tests pass in the sandbox (0/1)",
}


def _availability(entry: HFDataset) -> Any:
    def check() -> Unavailable | None:
        if missing_packages("datasets"):
            return _NO_DATASETS
        reason = cache_reason(entry)
        return Unavailable(UnavailableKind.NO_DATA, reason) if reason else None

    return check


def _spec(entry: HFDataset, subtask: str | None = None) -> TaskSpec:
    task_id = f"{SUITE}:{entry.id}" + (f"/{subtask}" if subtask else "")
    description = entry.description + (f": {subtask}" if subtask else "")
    return TaskSpec(
        id=task_id, suite=SUITE, description=description, module=_MODULE,
        parameter_kinds=("text",), scoring=_SCORING[entry.task_type], needs=("datasets",),
        availability=_availability(entry),
        tags=("prompt", "code" if entry.task_type == "code" else "qa", entry.task_type,
              *(("sandbox",) if entry.task_type == "code" else ())),  # the agent's code runs in the sandbox
    )


def discover() -> list[TaskSpec]:
    specs: list[TaskSpec] = []
    for entry in DATASETS.values():
        if entry.subtasks:
            specs.extend(_spec(entry, subtask) for subtask in entry.subtasks)
        else:
            specs.append(_spec(entry))
    return specs


def expand(task_id: str) -> list[str]:
    """``hf:bbeh`` -> every ``hf:bbeh/<subtask>``; other ids stand for themselves."""
    base, subtask = split_task_id(task_id)
    entry = DATASETS.get(base)
    if entry is None or subtask is not None or not entry.subtasks:
        return []
    return [f"{SUITE}:{entry.id}/{name}" for name in entry.subtasks]


def resolve(task_id: str) -> TaskSpec | None:
    base, subtask = split_task_id(task_id)
    entry = DATASETS.get(base)
    if entry is None:
        return None
    if entry.subtasks:
        return _spec(entry, subtask) if subtask in entry.subtasks else None
    return _spec(entry) if subtask is None else None


def available_with(spec: TaskSpec, eval_kwargs: dict[str, Any]) -> Unavailable | None:
    """Availability for a concrete job: local ``data_files`` make the hub (and its cache) unnecessary."""
    if eval_kwargs.get("data_files"):
        return _NO_DATASETS if missing_packages("datasets") else None
    return spec.unavailability()


def build(spec: TaskSpec, eval_kwargs: dict[str, Any]) -> dict[str, Any]:
    from trace_bench.tasks.hf.problem import build_trace_problem

    kwargs = {key: value for key, value in eval_kwargs.items() if key not in ("task_id", "subtask")}
    return build_trace_problem(task_id=spec.id, **kwargs)

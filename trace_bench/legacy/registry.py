"""The original ``trace_bench.registry`` functions, on top of our one task and trainer registry.

``load_task_bundle`` is the original's public name (kept only as this alias): it returns the
mapping a task's builder made (the *problem*), after checking it, and raises
``NotImplementedError`` for a task that cannot run here (the original's "skip" signal), with the
reason.  ``discover_*`` return the original's record shapes; ``expand_special_tasks`` expands
``hf:<family>`` and ``veribench:all`` ids the way a config's task list is expanded.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from trace_bench.registry.specs import TaskSpec
from trace_bench.registry.tasks import TaskCatalog, normalize_task_id, parse_benches

__all__ = [
    "TaskSpec", "TrainerSpec", "discover_hf_tasks", "discover_internal", "discover_llm4ad", "discover_tasks",
    "discover_terminal_bench", "discover_trace_examples", "discover_trainers", "discover_veribench",
    "ensure_llm4ad_importable", "ensure_opto_importable", "expand_special_tasks", "load_task_bundle", "load_task_module", "normalize_task_id",
]

_PROBLEM_DEFAULTS = {"optimizer_kwargs": dict, "metadata": dict}


@dataclass
class TrainerSpec:
    """The original's listing record: id, where it comes from, whether it can run here."""

    id: str
    source: str
    available: bool


def ensure_opto_importable() -> None:
    """Make the ``opto.trainer.*`` names that original task modules import resolve (a no-op when
    the installed ``opto`` has them; see :mod:`trace_bench.runner.job.opto_names`), with the harness's
    process setup: quiet defaults (no telemetry, LiteLLM's bundled price map) unless the user chose
    otherwise, and ``litellm``/``openai`` imported on first use instead of with ``opto`` (seconds)."""
    from trace_bench._util.runtime import configure_environment
    from trace_bench.runner.job.opto_names import install

    configure_environment()
    install()


def ensure_llm4ad_importable(tasks_root: str | Path) -> None:
    """Make ``import llm4ad_loader`` (the helper the original's LLM4AD task packages import) resolve
    to the one shipped beside ``tasks_root``; loading a task from such a root does this too."""
    from trace_bench.tasks.llm4ad.legacy_root import _register_loader

    ensure_opto_importable()
    _register_loader(Path(tasks_root))


def _catalog(tasks_root: str | Path | None) -> TaskCatalog:
    root = Path(tasks_root) if tasks_root else None
    return TaskCatalog.create(root if root is not None and root.is_dir() else None)


def discover_tasks(tasks_root: str | Path | None = None, bench: str | None = None) -> list[TaskSpec]:
    return _catalog(tasks_root).list(parse_benches(bench))


def _suite(suite: str, tasks_root: str | Path | None = None) -> list[TaskSpec]:
    return _catalog(tasks_root).list([suite])


def discover_llm4ad(tasks_root: str | Path | None = None) -> list[TaskSpec]:
    return _suite("llm4ad", tasks_root)


def discover_trace_examples() -> list[TaskSpec]:
    return _suite("trace_examples")


def discover_internal() -> list[TaskSpec]:
    return _suite("internal")


def discover_veribench() -> list[TaskSpec]:
    return _suite("veribench")


def discover_hf_tasks() -> list[TaskSpec]:
    return _suite("hf")


def discover_terminal_bench() -> list[TaskSpec]:
    return _suite("terminal_bench")


def discover_trainers() -> list[TrainerSpec]:
    from trace_bench.registry.trainers import list_trainers

    return [TrainerSpec(info.id, info.source, info.available) for info in list_trainers(include_unavailable=True)]


def _entry_parts(task: Any) -> tuple[str, dict[str, Any]]:
    if isinstance(task, str):
        return task, {}
    if isinstance(task, dict):
        return str(task.get("id") or task.get("key") or task.get("task")), dict(task.get("eval_kwargs") or {})
    return str(task.id), dict(getattr(task, "eval_kwargs", None) or {})


def expand_special_tasks(tasks: list[Any], tasks_root: str | Path | None = None) -> list[Any]:
    """Task entries with family ids expanded, normalised and de-duplicated (order kept)."""
    from trace_bench.config.models import TaskEntry

    catalog = _catalog(tasks_root)
    expanded: list[Any] = []
    seen: set[str] = set()
    for task in tasks:
        task_id, eval_kwargs = _entry_parts(task)
        task_id = normalize_task_id(task_id)
        if task_id == "veribench:all":
            from trace_bench.legacy.veribench import discover_task_names

            ids = [f"veribench:{name}" for name in discover_task_names()] or ["veribench:smoke_placeholder"]
        else:
            ids = catalog.expand(task_id)
        for new_id in ids:
            key = f"{new_id}|{json.dumps(eval_kwargs, sort_keys=True, default=str)}"
            if key not in seen:
                seen.add(key)
                expanded.append(TaskEntry(id=new_id, eval_kwargs=dict(eval_kwargs)))
    return expanded


def load_task_module(task_id: str, tasks_root: str | Path | None = None) -> ModuleType:
    """The module that builds ``task_id`` (user tasks from ``tasks_root`` keep package semantics)."""
    import importlib

    ensure_opto_importable()
    spec = _catalog(tasks_root).get(task_id)
    if spec.module_path is None:
        return importlib.import_module(spec.module)
    location = Path(spec.module_path)
    if location.is_dir():
        from trace_bench.tasks.llm4ad.legacy_root import load_task_module as load_legacy

        return load_legacy(location)
    from trace_bench.tasks.user_root import load_module_from_path

    return load_module_from_path(location)


def load_task_bundle(task_id: str, tasks_root: str | Path | None = None,
                     eval_kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """The problem mapping ``task_id`` builds with ``eval_kwargs`` (the original's name for it)."""
    from trace_bench.tasks.problem import Problem

    ensure_opto_importable()
    task_id = normalize_task_id(task_id)
    kwargs = dict(eval_kwargs or {})
    if task_id.startswith("veribench:"):
        from trace_bench.legacy.veribench import build_bundle

        raw = build_bundle(task_id.split(":", 1)[1], eval_kwargs=kwargs)
    else:
        catalog = _catalog(tasks_root)
        spec = catalog.get(task_id)
        reason = catalog.unavailability(spec, {**spec.default_eval_kwargs, **kwargs})
        if spec.stub_without_availability and os.environ.get("TRACE_BENCH_MODE") == "stub":
            reason = None  # e.g. Terminal-Bench: its stub mode never invokes the missing tool
        if reason:
            raise NotImplementedError(f"{task_id} is unavailable here: {reason}")
        raw = catalog.build(task_id, kwargs)
    if not isinstance(raw, dict):
        raise TypeError(f"{task_id}: the task built a {type(raw).__name__}, not a mapping")
    Problem.from_mapping(raw, task_id)  # the same checks a job applies
    for key, make in _PROBLEM_DEFAULTS.items():
        raw.setdefault(key, make())
    return raw

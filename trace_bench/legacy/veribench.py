"""``trace_bench.veribench_adapter``: the original's VeriBench adapter API, kept for existing code.

``discover_task_names()`` and ``build_bundle(task_name, eval_kwargs)`` first ask a user
*entrypoint* module, as the original did: ``$TRACE_BENCH_VERIBENCH_ENTRYPOINT`` (default
``my_processing_agents.optimize_veribench_agent``) importable from ``$TRACE_BENCH_VERIBENCH_ROOT``,
exposing ``list_tasks``/``get_task_list``/``discover_tasks`` (or ``TASKS``/``TASK_LIST``/
``AVAILABLE_TASKS``) and ``build_trace_problem``/``build_task_bundle``/``build_problem``.  Without
one they use trace-bench's VeriBench suite (local rows or the cached HF dataset; Lean-scored).
A task that cannot be built raises ``NotImplementedError`` with the reason (the original's skip).
``trace-bench run`` always uses the suite; the entrypoint serves this Python API only.
"""

from __future__ import annotations

import importlib
import os
import sys
from functools import lru_cache
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT_ENV = "TRACE_BENCH_VERIBENCH_ROOT"
ENTRYPOINT_ENV = "TRACE_BENCH_VERIBENCH_ENTRYPOINT"
DEFAULT_ENTRYPOINT = "my_processing_agents.optimize_veribench_agent"
PLACEHOLDER = "smoke_placeholder"
_LISTERS = ("list_tasks", "get_task_list", "discover_tasks")
_LISTS = ("TASKS", "TASK_LIST", "AVAILABLE_TASKS")
_BUILDERS = ("build_trace_problem", "build_task_bundle", "build_problem")
_NAME_KWARGS = ("task_name", "task", "task_id", "name")


@lru_cache(maxsize=1)
def _entrypoint() -> ModuleType | None:
    """The user's entrypoint module, or None when ``$TRACE_BENCH_VERIBENCH_ROOT`` does not hold one."""
    root = os.environ.get(ROOT_ENV)
    dotted = os.environ.get(ENTRYPOINT_ENV) or DEFAULT_ENTRYPOINT
    if not root or not Path(root).is_dir():
        return None
    top = dotted.split(".", 1)[0]
    if not ((Path(root) / top).is_dir() or (Path(root) / f"{top}.py").is_file()):
        return None
    if root not in sys.path:
        sys.path.insert(0, root)
    try:
        return importlib.import_module(dotted)
    except Exception:  # a broken entrypoint falls back to the suite, as in the original
        return None


def _clear_caches() -> None:
    _entrypoint.cache_clear()


def _names_from(module: ModuleType) -> list[str] | None:
    for attribute in (*_LISTERS, *_LISTS):
        value = getattr(module, attribute, None)
        if value is None:
            continue
        names = value() if callable(value) else value
        return [str(name) for name in dict.fromkeys(names or [])]
    return None


def _discover_from_dataset() -> list[str]:
    """Task names of the suite's data (local rows, else the HF dataset); raises NotImplementedError."""
    from trace_bench.tasks.veribench.data import VeriBenchDataError, load_rows

    try:
        return [row.name for row in load_rows()]
    except VeriBenchDataError as exc:
        raise NotImplementedError(f"veribench_unavailable: {exc}") from exc


def discover_task_names() -> list[str]:
    """Every VeriBench task name (duplicates dropped); [] when there is no VeriBench data at all."""
    module = _entrypoint()
    if module is not None:
        names = _names_from(module)
        if names is not None:
            return names
    try:
        return _discover_from_dataset()
    except NotImplementedError:
        return []


def build_bundle(task_name: str, eval_kwargs: dict[str, Any] | None = None) -> dict[str, Any]:
    """The problem of one VeriBench task (the original's name); NotImplementedError when unavailable."""
    kwargs = dict(eval_kwargs or {})
    if task_name in ("all", PLACEHOLDER):
        raise NotImplementedError("veribench_unavailable: no VeriBench task named "
                                  f"{task_name!r} (give VeriBench data or an entrypoint)")
    module = _entrypoint()
    builder = next((getattr(module, name) for name in _BUILDERS if callable(getattr(module, name, None))), None) \
        if module is not None else None
    if builder is not None:
        for key in _NAME_KWARGS:
            try:
                built: dict[str, Any] = builder(**{key: task_name}, **kwargs)
                return built
            except TypeError:
                continue
        raise NotImplementedError(f"veribench_unavailable: the entrypoint cannot build {task_name!r}")
    from trace_bench.registry.tasks import TaskCatalog

    catalog = TaskCatalog.create()
    spec = catalog.get(f"veribench:{task_name}")
    reason = catalog.unavailability(spec, kwargs)
    if reason:
        raise NotImplementedError(f"veribench_unavailable: {reason}")
    bundle: dict[str, Any] = catalog.build(spec.id, kwargs)
    return bundle

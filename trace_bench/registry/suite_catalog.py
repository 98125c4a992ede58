"""The built-in task suites' metadata and the one shape the registry gives every suite.

``trace_bench/tasks/suites.json`` is the one place a built-in suite is declared, beside the suites
(as ``trainers/catalog.json`` is for trainers): its name and module, listed in this order; ``opt_in``
(it costs money or needs infrastructure: listed only when ``--bench`` names it); ``preload`` (a
library every one of its jobs imports, which the run's job template imports once:
``runner.warm``); ``numpy_free`` (its tasks never import numpy: a run of only such tasks gets a
template without it); ``hooks`` (the optional hooks of :class:`~trace_bench.tasks.suite.Suite` its
module defines).  Read as a file, so listing suites imports no suite module.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

from trace_bench._util.availability import Unavailable
from trace_bench.registry.rows import read_rows
from trace_bench.tasks.spec import TaskSpec
from trace_bench.tasks.suite import HOOKS


@dataclass(frozen=True)
class SuiteMetadata:
    """One row of ``trace_bench/tasks/suites.json`` (see the module docstring)."""

    name: str
    module: str
    opt_in: bool = False
    preload: str | None = None
    numpy_free: bool = False
    hooks: tuple[str, ...] = ()


def _builtin_suites() -> tuple[SuiteMetadata, ...]:
    return read_rows(Path(__file__).resolve().parents[1] / "tasks" / "suites.json", SuiteMetadata)


BUILTIN_SUITE_ROWS: tuple[SuiteMetadata, ...] = _builtin_suites()


class ModuleSuite:
    """A suite module as a :class:`~trace_bench.tasks.suite.Suite`: the hooks it declares are its
    functions, every other hook answers the default (no extra task, no expansion, the spec's own
    availability, the builder ``spec.module`` names)."""

    def __init__(self, name: str, module: ModuleType, hooks: Iterable[str]) -> None:
        unknown = sorted(set(hooks) - set(HOOKS))
        if unknown:
            raise ValueError(f"suite {name!r} declares unknown hooks {unknown} (known: {', '.join(HOOKS)})")
        self.name = name
        self.module = module
        self._hooks = {hook: getattr(module, hook) for hook in hooks}

    @classmethod
    def of_plugin(cls, name: str, module: ModuleType) -> ModuleSuite:
        """A plugin's suite module: the hooks its ``HOOKS`` names; a module written before suites
        declared them (no ``HOOKS``) has the hook functions it defines."""
        declared = getattr(module, "HOOKS", None)
        if declared is None:
            declared = [hook for hook in HOOKS if callable(getattr(module, hook, None))]
        return cls(name, module, declared)

    def discover(self) -> Iterable[TaskSpec]:
        found: Iterable[TaskSpec] = self.module.discover()
        return found

    def resolve(self, task_id: str) -> TaskSpec | None:
        hook = self._hooks.get("resolve")
        return hook(task_id) if hook is not None else None

    def expand(self, task_id: str) -> list[str]:
        hook = self._hooks.get("expand")
        return list(hook(task_id) or []) if hook is not None else []

    def available_with(self, spec: TaskSpec, eval_kwargs: Mapping[str, Any]) -> Unavailable | None:
        hook = self._hooks.get("available_with")
        return Unavailable.coerce(hook(spec, eval_kwargs)) if hook is not None else spec.unavailability()

    def build(self, spec: TaskSpec, eval_kwargs: dict[str, Any]) -> Any:
        hook = self._hooks.get("build")
        if hook is not None:
            return hook(spec, eval_kwargs)
        return getattr(importlib.import_module(spec.module), spec.builder)(**eval_kwargs)

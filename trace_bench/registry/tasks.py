"""The one registry of tasks: built-in suites, ``--root`` directories and entry-point suites.

Listing reads static :class:`TaskSpec` records only; a task's module is imported when a job
builds its problem.  Every suite is a :class:`~trace_bench.tasks.suite.Suite`: a module that exposes
``SUITE`` and ``discover()`` and the optional hooks it declares (``resolve``, ``expand``,
``available_with``, ``build``), wrapped in one :class:`~trace_bench.registry.suite_catalog.ModuleSuite`.
The built-in suites are the rows of ``trace_bench/tasks/suites.json``
(:mod:`trace_bench.registry.suite_catalog`).
"""

from __future__ import annotations

import builtins
import importlib
import importlib.util
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trace_bench._util.availability import Unavailable, UnavailableKind
from trace_bench._util.entry_points import entry_points
from trace_bench._util.errors import ConfigError, did_you_mean
from trace_bench.registry.suite_catalog import BUILTIN_SUITE_ROWS, ModuleSuite
from trace_bench.tasks.spec import TaskSpec

ENTRY_POINT_GROUP = "trace_bench.tasks"

#: suite name -> module, listed in this order (suites.json's rows); suites whose module is absent are skipped
BUILTIN_SUITES: dict[str, str] = {row.name: row.module for row in BUILTIN_SUITE_ROWS}
#: suites that cost money or need infrastructure: listed only when asked for by --bench
OPT_IN_SUITES = frozenset(row.name for row in BUILTIN_SUITE_ROWS if row.opt_in)
_HOOKS = {row.name: row.hooks for row in BUILTIN_SUITE_ROWS}


DEFAULT_ROOT = Path("benchmarks/LLM4AD/benchmark_tasks")


def normalize_task_id(task_id: str) -> str:
    """A bare name means ``llm4ad:<name>``; ``example:`` is an alias of ``trace_examples:``."""
    task_id = task_id.strip()
    if ":" not in task_id:
        return f"llm4ad:{task_id}"
    suite, _, name = task_id.partition(":")
    if suite == "example":
        suite = "trace_examples"
    return f"{suite}:{name}"


def parse_benches(value: str | None, extra: Iterable[str] = ()) -> list[str] | None:
    """The suites ``--bench`` names; ``extra``: suites a ``--root`` directory adds."""
    if not value:
        return None
    names = [b.strip() for b in value.replace("+", ",").split(",") if b.strip()]
    known = set(BUILTIN_SUITES) | set(_plugin_suites()) | set(extra)
    for name in names:
        if name not in known:
            raise ConfigError(f"unknown bench '{name}'", key_path="--bench",
                              hint=did_you_mean(name, sorted(known)) or f"choose from {', '.join(sorted(known))}")
    return names


def root_suite(root: str | Path) -> str:
    """The suite of a ``--root`` task directory (``llm4ad`` unless it names its own)."""
    from trace_bench.tasks.user_root import root_suite as suite_of

    return suite_of(root)


def _plugin_suites() -> dict[str, str]:
    try:
        return {ep.name: ep.value for ep in entry_points(group=ENTRY_POINT_GROUP)}
    except Exception:
        return {}


_BROKEN: dict[str, str] = {}


def broken_suites() -> dict[str, str]:
    """Suites whose module failed to load in this process, with the reason."""
    return dict(_BROKEN)


def _suite_module(name: str) -> ModuleSuite | None:
    """The suite, or None when absent or broken (a broken plugin must not break listing)."""
    target = BUILTIN_SUITES.get(name) or _plugin_suites().get(name)
    if target is None:
        return None
    module_name = target.partition(":")[0]
    try:
        if importlib.util.find_spec(module_name) is None:
            return None
        module = importlib.import_module(module_name)
    except Exception as exc:
        _BROKEN[name] = f"{type(exc).__name__}: {exc}"
        return None
    if not callable(getattr(module, "discover", None)):
        _BROKEN[name] = f"{module_name} defines no discover()"
        return None
    try:
        return ModuleSuite(name, module, _HOOKS[name]) if name in _HOOKS else ModuleSuite.of_plugin(name, module)
    except Exception as exc:  # a hook declared and not defined, or an unknown one
        _BROKEN[name] = f"{type(exc).__name__}: {exc}"
        return None


@dataclass
class TaskCatalog:
    """Tasks visible to one command: built-in suites plus an optional ``--root`` directory."""

    root: Path | None = None
    specs: dict[str, TaskSpec] = field(default_factory=dict)
    loaded_suites: set[str] = field(default_factory=set)
    root_suites: list[str] = field(default_factory=list)  # suites a --root directory names

    @classmethod
    def create(cls, root: str | Path | None = None) -> TaskCatalog:
        if root is None and DEFAULT_ROOT.is_dir():  # the original's default, relative to the cwd
            root = DEFAULT_ROOT
        catalog = cls(root=Path(root) if root else None)
        if catalog.root is not None:
            from trace_bench.tasks.user_root import discover_root

            for spec in discover_root(catalog.root):
                catalog.specs[spec.id] = spec
                if spec.suite not in catalog.root_suites:
                    catalog.root_suites.append(spec.suite)
        return catalog

    def _load_suite(self, suite: str) -> ModuleSuite | None:
        module = _suite_module(suite)
        if suite not in self.loaded_suites:
            self.loaded_suites.add(suite)
            if module is not None:
                try:
                    specs = list(module.discover())
                except Exception as exc:
                    _BROKEN[suite] = f"discover() failed: {type(exc).__name__}: {exc}"
                    specs = []
                for spec in specs:
                    self.specs.setdefault(spec.id, spec)  # --root tasks shadow built-ins
        return module

    def list(self, benches: Iterable[str] | None = None) -> list[TaskSpec]:
        names = list(benches) if benches else [s for s in [*BUILTIN_SUITES, *_plugin_suites()] if s not in OPT_IN_SUITES]
        if not benches:  # suites that only a --root folder declares
            names += [suite for suite in dict.fromkeys(s.suite for s in self.specs.values()) if suite not in names]
        for name in names:
            self._load_suite(name)
        order = {name: i for i, name in enumerate(names)}
        chosen = [s for s in self.specs.values() if s.suite in order]
        return sorted(chosen, key=lambda s: order[s.suite])

    def expand(self, task_id: str) -> builtins.list[str]:  # (``list`` is a method of this class)
        task_id = normalize_task_id(task_id)
        module = self._load_suite(task_id.split(":", 1)[0])
        if task_id not in self.specs and module is not None:
            expanded = module.expand(task_id)
            if expanded:
                return [normalize_task_id(t) for t in expanded]
        return [task_id]

    def get(self, task_id: str) -> TaskSpec:
        task_id = normalize_task_id(task_id)
        suite = task_id.split(":", 1)[0]
        module = self._load_suite(suite)
        if task_id in self.specs:
            return self.specs[task_id]
        if module is not None:
            spec: TaskSpec | None = module.resolve(task_id)
            if spec is not None:
                self.specs[task_id] = spec
                return spec
        if module is None and suite not in BUILTIN_SUITES and suite not in _plugin_suites():
            known = sorted(set(BUILTIN_SUITES) | set(_plugin_suites()))
            raise ConfigError(f"unknown task suite '{suite}' in task id '{task_id}'", key_path="tasks",
                              hint=did_you_mean(suite, known) or f"suites: {', '.join(known)}")
        if suite in _BROKEN:
            raise ConfigError(f"task suite '{suite}' cannot be loaded ({_BROKEN[suite]}), so '{task_id}' is "
                              "unavailable", key_path="tasks")
        name = task_id.split(":", 1)[1]
        elsewhere = [s for s in self.specs if s.split(":", 1)[1] == name and s.split(":", 1)[0] in self.root_suites]
        if elsewhere:  # a bare name means llm4ad:, and the --root directory names its own suite
            raise ConfigError(f"unknown task '{task_id}'", key_path="tasks",
                              hint=f"did you mean '{elsewhere[0]}'? the --root directory names its suite "
                                   f"'{elsewhere[0].split(':', 1)[0]}'")
        same_suite = [s for s in self.specs if s.startswith(f"{suite}:")]
        hint = did_you_mean(task_id, same_suite) or did_you_mean(task_id, list(self.specs))
        raise ConfigError(f"unknown task '{task_id}'", key_path="tasks", hint=hint or "see trace-bench list-tasks")

    def unavailability(self, spec: TaskSpec, eval_kwargs: dict[str, Any]) -> Unavailable | None:
        """Why ``spec`` cannot run with ``eval_kwargs`` (a suite may accept e.g. local data files)."""
        suite = _suite_module(spec.suite) if spec.module_path is None else None
        if suite is None:
            return spec.unavailability()
        try:
            return suite.available_with(spec, eval_kwargs)
        except Exception as exc:
            return Unavailable(UnavailableKind.MISSING_TOOL, f"availability check failed: {exc}")

    def build(self, task_id: str, eval_kwargs: dict[str, Any] | None = None) -> Any:
        """Import the task's module and build its problem (returns the raw mapping)."""
        spec = self.get(task_id)
        kwargs = {**spec.default_eval_kwargs, **(eval_kwargs or {})}
        if spec.module_path is not None:
            from trace_bench.tasks.user_root import build_from_path

            return build_from_path(spec, kwargs)
        suite = _suite_module(spec.suite)
        if suite is not None:
            return suite.build(spec, kwargs)
        task_module = importlib.import_module(spec.module)
        return getattr(task_module, spec.builder)(**kwargs)

"""What a task suite is: the :class:`Suite` protocol the registry calls, and its optional hooks.

A suite lists its tasks (``discover``) and may answer four questions more (:data:`HOOKS`): a task id
it accepts without listing it (``resolve``), ids that stand for several tasks (``expand``), why a
task cannot run with a config's eval kwargs (``available_with``) and how a problem is built when not
by ``spec.module``'s builder (``build``).  A built-in suite is a module whose hooks its row of
``trace_bench/tasks/suites.json`` names (beside the library its jobs preload, whether it is listed
only on request, whether its tasks need numpy); a plugin's module names its own in ``HOOKS``.  The
registry wraps either in one object (``trace_bench.registry.suite_catalog.ModuleSuite``) that
answers every hook, with the default where the suite declares none: no hook is looked up by
``hasattr``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from trace_bench._util.availability import Unavailable
from trace_bench.tasks.spec import TaskSpec

#: the optional hooks of a suite, in the order a reader meets them
HOOKS = ("resolve", "expand", "available_with", "build")


@runtime_checkable
class Suite(Protocol):
    """One task suite, as the registry uses it."""

    name: str

    def discover(self) -> Iterable[TaskSpec]:
        """The suite's tasks as static records (``list-tasks`` calls it: import nothing heavy)."""
        ...

    def resolve(self, task_id: str) -> TaskSpec | None:
        """A task the suite accepts without listing it; None: not one of its ids."""
        ...

    def expand(self, task_id: str) -> list[str]:
        """The tasks ``task_id`` stands for; empty: it stands for itself."""
        ...

    def available_with(self, spec: TaskSpec, eval_kwargs: Mapping[str, Any]) -> Unavailable | None:
        """Why ``spec`` cannot run with ``eval_kwargs``; None: it can."""
        ...

    def build(self, spec: TaskSpec, eval_kwargs: dict[str, Any]) -> Any:
        """The task's problem (the raw mapping) for ``eval_kwargs``."""
        ...

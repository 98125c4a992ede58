"""Static description of a task: :class:`TaskSpec`.

Listing commands must stay fast and must not import a task's heavy dependencies, so every suite
describes its tasks with these plain records; the code that builds a problem is named by a module
path and imported only when a job needs it.  (``trace_bench.registry.specs`` re-exports these
names for plugins written against it.)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trace_bench._util.availability import (
    Availability,
    Unavailable,
    UnavailableKind,
    missing_packages,
    requires,
    requires_executable,
)

__all__ = ["Availability", "TaskSpec", "Unavailable", "UnavailableKind", "missing_packages", "requires",
           "requires_executable"]


@dataclass(frozen=True)
class TaskSpec:
    """One task: its id, what is optimized, how it is scored, where its builder lives."""

    id: str
    suite: str
    description: str
    module: str
    builder: str = "build_trace_problem"
    parameter_kinds: tuple[str, ...] = ()
    scoring: str = ""
    needs: tuple[str, ...] = ()
    availability: Availability | None = field(default=None, compare=False, repr=False)
    default_eval_kwargs: dict[str, Any] = field(default_factory=dict, compare=False)
    module_path: str | None = None
    tags: tuple[str, ...] = ()
    stub_without_availability: bool = False  # e.g. Harbor tasks: stub mode never invokes the tool
    #: the values a task measures itself against, shown by list-tasks: ``best_known`` (value and date),
    #: ``best_known_source``, ``alphaevolve`` (the built-in discovery problems' second yardstick)
    yardsticks: dict[str, str] = field(default_factory=dict, compare=False)

    @property
    def name(self) -> str:
        return self.id.split(":", 1)[1] if ":" in self.id else self.id

    def unavailability(self) -> Unavailable | None:
        """Why the task cannot run here (typed), or None."""
        if self.availability is None:
            return None
        try:
            return Unavailable.coerce(self.availability())
        except Exception as exc:  # an availability probe must never break listing
            return Unavailable(UnavailableKind.MISSING_TOOL, f"availability check failed: {exc}")

    def unavailable_reason(self) -> str | None:
        """The message of :meth:`unavailability` (what listings print)."""
        reason = self.unavailability()
        return None if reason is None else reason.message

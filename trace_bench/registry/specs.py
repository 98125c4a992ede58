"""Static descriptions of tasks and trainers.

Listing commands must stay fast and must not import a task's or trainer's heavy dependencies,
so every suite describes its tasks with these plain records; the code that builds a problem is
named by a module path and imported only when a job needs it.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any


def missing_packages(*modules: str) -> list[str]:
    """Top-level import names among ``modules`` that are not installed (no import happens)."""
    absent = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            absent.append(name)
    return absent


def requires(*modules: str, extra: str | None = None) -> Callable[[], str | None]:
    """Availability check: the reason a task is unavailable, or None when it can run."""

    def check() -> str | None:
        absent = missing_packages(*modules)
        if not absent:
            return None
        hint = f"install trace-bench[{extra}]" if extra else f"pip install {' '.join(absent)}"
        return f"missing {', '.join(absent)}: {hint}"

    return check


def requires_executable(name: str, reason: str | None = None) -> Callable[[], str | None]:
    def check() -> str | None:
        return None if shutil.which(name) else (reason or f"{name} not found")

    return check


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
    availability: Callable[[], str | None] | None = field(default=None, compare=False, repr=False)
    default_eval_kwargs: dict[str, Any] = field(default_factory=dict, compare=False)
    module_path: str | None = None
    tags: tuple[str, ...] = ()
    stub_without_availability: bool = False  # e.g. Harbor tasks: stub mode never invokes the tool

    @property
    def name(self) -> str:
        return self.id.split(":", 1)[1] if ":" in self.id else self.id

    def unavailable_reason(self) -> str | None:
        if self.availability is None:
            return None
        try:
            return self.availability()
        except Exception as exc:  # an availability probe must never break listing
            return f"availability check failed: {exc}"

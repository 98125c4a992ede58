"""Public names for plugin suites written against ``trace_bench.registry.specs``.

The records live where they belong in the layers: :class:`TaskSpec` in ``trace_bench.tasks.spec``
(tasks describe themselves), the availability vocabulary in ``trace_bench._util.availability`` (tasks
and trainers share it).  New code imports from there.
"""

from __future__ import annotations

from trace_bench._util.availability import (
    Unavailable,
    UnavailableKind,
    missing_packages,
    requires,
    requires_executable,
)
from trace_bench.tasks.spec import TaskSpec

__all__ = ["TaskSpec", "Unavailable", "UnavailableKind", "missing_packages", "requires", "requires_executable"]

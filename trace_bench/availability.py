"""Why a task or trainer cannot run here, typed: the names task and trainer authors use
(docs/adding-task.md).  The implementation is a leaf helper, :mod:`trace_bench._util.availability`;
this module keeps the documented import path."""

from __future__ import annotations

from trace_bench._util.availability import (
    Unavailable,
    UnavailableKind,
    missing_packages,
    requires,
    requires_executable,
)

__all__ = ["Unavailable", "UnavailableKind", "missing_packages", "requires", "requires_executable"]

"""``trace_bench.veribench_adapter``: the original Trace-Bench's VeriBench adapter API, kept at its
path for existing code; the implementation is :mod:`trace_bench.legacy.veribench`."""

from __future__ import annotations

from trace_bench.legacy.veribench import (
    DEFAULT_ENTRYPOINT,
    ENTRYPOINT_ENV,
    PLACEHOLDER,
    ROOT_ENV,
    build_bundle,
    discover_task_names,
)

__all__ = ["DEFAULT_ENTRYPOINT", "ENTRYPOINT_ENV", "PLACEHOLDER", "ROOT_ENV", "build_bundle", "discover_task_names"]

"""The runner: the driver side (this package's modules: plans a run, schedules job processes,
keeps the run directory up to date) and what runs inside a job process (:mod:`.job`).

Use ``trace_bench.execute_run``; the original Trace-Bench's ``trace_bench.runner.BenchRunner``
still resolves, with a DeprecationWarning (docs/coming-from-original.md).
"""

from __future__ import annotations

from trace_bench._util.relocated import relocated_getattr

__getattr__ = relocated_getattr(__name__)

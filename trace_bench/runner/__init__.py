"""The runner: plans a run, schedules job processes, and keeps the run directory up to date.

``trace_bench.runner.BenchRunner`` is the original Trace-Bench's entry point
(:mod:`trace_bench.compat.runner`); ``execute_run`` is ours.
"""

from __future__ import annotations

from trace_bench.compat.exports import lazy_getattr

__getattr__ = lazy_getattr(__name__, {"BenchRunner": "trace_bench.compat.runner",
                                      "RunSummary": "trace_bench.compat.runner",
                                      "execute_run": "trace_bench.runner.run", "RunOptions": "trace_bench.runner.run",
                                      "RunOutcome": "trace_bench.runner.run"})

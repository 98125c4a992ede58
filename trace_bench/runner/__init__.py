"""The runner: plans a run, schedules job processes, and keeps the run directory up to date.

``trace_bench.runner.BenchRunner`` is the original Trace-Bench's entry point
(:mod:`trace_bench.legacy.runner`); ``execute_run`` is ours.
"""

from __future__ import annotations

from trace_bench._lazy import lazy_getattr

__getattr__ = lazy_getattr(__name__, {"BenchRunner": "trace_bench.legacy.runner",
                                      "RunSummary": "trace_bench.legacy.runner",
                                      "execute_run": "trace_bench.runner.run", "RunOptions": "trace_bench.runner.options",
                                      "RunOutcome": "trace_bench.runner.options",
                                      # helpers of the original's runner about its artifacts
                                      "_state_rel_paths": "trace_bench.legacy.results:state_paths",
                                      "_select_best_state": "trace_bench.legacy.results:select_best_state",
                                      "_token_scope_note": "trace_bench.legacy.results:token_scope_note"})

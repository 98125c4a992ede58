"""``trace_bench.trainers.textgrad_trainer``: the original module path of :class:`TextGradTrainer`.

The class is trace-bench's adapter (:mod:`trace_bench.trainers.external.textgrad_trainer`): it runs
inside a job, with the harness's metering, budgets and curves, and is built by the runner from a
config (``trainers: [{id: TextGradTrainer, ...}]``), not by calling its constructor on an agent.
"""

from __future__ import annotations

from trace_bench.trainers.external.textgrad_trainer import TextGradTrainer

__all__ = ["TextGradTrainer"]

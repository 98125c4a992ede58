"""``trace_bench.trainers.dspy_trainer``: the original module path of :class:`DSPyTrainer`.

The class is trace-bench's adapter (:mod:`trace_bench.trainers.external.dspy_trainer`): it runs
inside a job, with the harness's metering, budgets and curves, and is built by the runner from a
config (``trainers: [{id: DSPyTrainer, ...}]``), not by calling its constructor on an agent.
"""

from __future__ import annotations

from trace_bench.trainers.external.dspy_trainer import DSPyTrainer

__all__ = ["DSPyTrainer"]

"""``trace_bench.trainers.openevolve_trainer``: the original module path of :class:`OpenEvolveTrainer`.

The class is trace-bench's adapter (:mod:`trace_bench.trainers.external.openevolve_trainer`): it runs
inside a job, with the harness's metering, budgets and curves, and is built by the runner from a
config (``trainers: [{id: OpenEvolveTrainer, ...}]``), not by calling its constructor on an agent.
"""

from __future__ import annotations

from trace_bench.trainers.external.openevolve_trainer import OpenEvolveTrainer

__all__ = ["OpenEvolveTrainer"]

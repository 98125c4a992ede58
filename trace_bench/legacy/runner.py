"""``trace_bench.runner.BenchRunner``: the original's Python entry point, with its return value.

``BenchRunner(config, tasks_root=..., job_timeout=...).run(force=False)`` returns a
:class:`RunSummary`: our :class:`~trace_bench.runner.options.RunOutcome` (``run_id``, ``run_dir``,
``records``, ``exit_code``) plus ``results``, one dict per job in the original's shape
(:func:`trace_bench.legacy.results.legacy_row`).  ``force=True`` re-runs every job, like the
original's ``--force``.  The config may be a RunConfig, a mapping or a YAML/JSON path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trace_bench.runner.api import BenchRunner as _Runner
from trace_bench.runner.options import RunOutcome


@dataclass
class RunSummary(RunOutcome):
    results: list[dict[str, Any]] = field(default_factory=list)


class BenchRunner(_Runner):
    def run(self, force: bool | None = None) -> RunSummary:  # type: ignore[override]
        from trace_bench.legacy.results import legacy_row

        if force is not None:
            self.options.force = force
        outcome = super().run()
        results = [legacy_row(record) for record in outcome.records]
        return RunSummary(outcome.run_id, outcome.run_dir, outcome.records, interrupted=outcome.interrupted,
                          not_run=list(outcome.not_run), results=results)

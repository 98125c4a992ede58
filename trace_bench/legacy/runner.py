"""``trace_bench.runner.BenchRunner``: the original's Python entry point, with its return value.

``BenchRunner(config, tasks_root=..., job_timeout=...).run(force=False)`` returns a
:class:`RunSummary`: our :class:`~trace_bench.runner.options.RunOutcome` (``run_id``, ``run_dir``,
``records``, ``exit_code``) plus ``results``, one dict per job in the original's shape
(:func:`trace_bench.legacy.results.legacy_row`).  ``force=True`` re-runs every job, like the
original's ``--force``.  The config may be a RunConfig, a mapping or a YAML/JSON path.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trace_bench.config.models import RunConfig
from trace_bench.runner.options import RunOptions, RunOutcome
from trace_bench.runner.run import execute_run
from trace_bench.store.models import JobResult
from trace_bench.store.results_index import LazyResult, loaded


@dataclass
class RunSummary(RunOutcome):
    results: list[dict[str, Any]] = field(default_factory=list)


class BenchRunner:
    """``BenchRunner(config, tasks_root=None, max_workers=None, job_timeout=None).run()``: one
    :func:`~trace_bench.runner.run.execute_run` of ``config`` (a :class:`RunConfig`, a mapping, or
    a path to a YAML/JSON file)."""

    def __init__(self, config: RunConfig | dict[str, Any] | str | Path, tasks_root: str | None = None,
                 max_workers: int | None = None, job_timeout: float | None = None, force: bool = False,
                 runs_dir: str | None = None, quiet: bool = True) -> None:
        from trace_bench.config.loader import load_config, parse_config

        if isinstance(config, (str, Path)):
            config = load_config(config)
        elif isinstance(config, dict):
            config = parse_config(config)
        self.config = config
        self.options = RunOptions(runs_dir=runs_dir, root=tasks_root, max_workers=max_workers,
                                  job_timeout=job_timeout, force=force, quiet=quiet)

    def run(self, force: bool | None = None) -> RunSummary:
        from trace_bench.legacy.results import legacy_row

        if force is not None:
            self.options.force = force
        outcome = execute_run(self.config, self.options)
        records: list[JobResult | LazyResult] = [loaded(record) for record in outcome.records]
        results = [legacy_row(record) for record in records]
        return RunSummary(outcome.run_id, outcome.run_dir, records, interrupted=outcome.interrupted,
                          not_run=list(outcome.not_run), results=results)

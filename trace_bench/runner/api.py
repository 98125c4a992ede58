"""``BenchRunner``: the original Trace-Bench Python entry point on top of :func:`execute_run`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from trace_bench.config.models import RunConfig
from trace_bench.runner.options import RunOptions, RunOutcome
from trace_bench.runner.run import execute_run


class BenchRunner:
    """``BenchRunner(config, tasks_root=None, max_workers=None, job_timeout=None).run()``.

    ``config`` may be a :class:`RunConfig`, a mapping, or a path to a YAML/JSON file.
    """

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

    def run(self) -> RunOutcome:
        return execute_run(self.config, self.options)

"""trace-bench: fair, reproducible benchmarking of LLM-as-optimizer algorithms on Trace.

The public Python API, resolved lazily so that ``import trace_bench`` stays cheap:

- ``load_config(path)`` / ``parse_config(data)`` -> ``RunConfig``
- ``execute_run(config, RunOptions(...))`` -> ``RunOutcome`` (run_id, run_dir, records, exit_code)
- ``BenchRunner(config).run(force=False)``: the original Trace-Bench entry point, kept for existing
  scripts; its result is a ``RunOutcome`` with ``results`` (per-job dicts in the original's shape)
"""

from __future__ import annotations

# the original Trace-Bench's names on our packages (``trace_bench.runner.BenchRunner``, ...),
# answered from one table with a DeprecationWarning; a light module, no layer imported
from trace_bench.legacy import names as _relocated_names  # noqa: F401

_EXPORTS = {
    "load_config": "trace_bench.config.loader",
    "parse_config": "trace_bench.config.loader",
    "RunConfig": "trace_bench.config.models",
    "ConfigError": "trace_bench._util.errors",
    "TraceBenchError": "trace_bench._util.errors",
    "execute_run": "trace_bench.runner.run",
    "RunOptions": "trace_bench.runner.options",
    "RunOutcome": "trace_bench.runner.options",
    "BenchRunner": "trace_bench.legacy.runner",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> object:
    """The public names, imported on first use (``_util.lazy`` itself too: ``import trace_bench`` is
    the first thing the program's throw-away hash-seed interpreter does, see ``cli.entry``)."""
    from trace_bench._util.lazy import exports

    return exports(__name__, _EXPORTS)(name)

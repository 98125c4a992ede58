"""Config: pydantic models, loading with clear errors.

Names are resolved lazily so that ``trace_bench._util.errors`` (used by the fast list
commands) does not pull in pydantic.
"""

from __future__ import annotations

from trace_bench._util.lazy import exports

_EXPORTS = {
    "ConfigError": "trace_bench._util.errors", "did_you_mean": "trace_bench._util.errors",
    "load_config": "trace_bench.config.loader", "parse_config": "trace_bench.config.loader",
    "BudgetConfig": "trace_bench.config.models", "LLMConfig": "trace_bench.config.models",
    "RunConfig": "trace_bench.config.models", "TaskEntry": "trace_bench.config.models",
    "TrainerEntry": "trace_bench.config.models", "LLMIdentity": "trace_bench.config.identity",
    # the original Trace-Bench's names for the same entries
    "TaskConfig": "trace_bench.config.models:TaskEntry", "TrainerConfig": "trace_bench.config.models:TrainerEntry",
}

__all__ = sorted(_EXPORTS)

__getattr__ = exports(__name__, _EXPORTS)

"""Config: pydantic models, loading with clear errors (no heavy imports here)."""

from __future__ import annotations

from trace_bench.config.errors import ConfigError, did_you_mean
from trace_bench.config.loader import load_config, parse_config
from trace_bench.config.models import BudgetConfig, LLMConfig, RunConfig, TaskEntry, TrainerEntry

__all__ = [
    "BudgetConfig", "ConfigError", "LLMConfig", "RunConfig", "TaskEntry", "TrainerEntry",
    "did_you_mean", "load_config", "parse_config",
]

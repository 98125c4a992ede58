"""Read a YAML/JSON config file into a validated :class:`RunConfig`, or a clear ConfigError."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from trace_bench.config.errors import ConfigError
from trace_bench.config.models import RunConfig, parse_config

__all__ = ["load_config", "parse_config", "read_config_data"]


def read_config_data(path: str | Path) -> Any:
    path = Path(path)
    if not path.exists():
        raise ConfigError("config file not found", file=str(path))
    if path.is_dir():
        raise ConfigError("config path is a directory, expected a YAML or JSON file", file=str(path))
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config: {exc}", file=str(path)) from None
    try:
        return yaml.safe_load(text)  # YAML is a superset of JSON: one parser for both
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown position"
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError(f"YAML syntax error at {where}: {problem}", file=str(path)) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"YAML error: {exc}", file=str(path)) from None


def load_config(path: str | Path) -> RunConfig:
    """Load and validate a config file; raises :class:`ConfigError` with file and key path."""
    return parse_config(read_config_data(path), file=str(path))

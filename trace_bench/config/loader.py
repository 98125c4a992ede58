"""Read a YAML/JSON config file into a validated :class:`RunConfig`, or a clear ConfigError."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import yaml

from trace_bench._util.errors import ConfigError
from trace_bench.config.models import RunConfig, parse_config
from trace_bench.config.safe_yaml import MAX_BYTES, load_bounded

__all__ = ["load_config", "parse_config", "parse_overridden", "parse_yaml_text", "read_config_data"]


def read_config_data(path: str | Path) -> Any:
    """The parsed YAML/JSON document of ``path``, within the bounds of :mod:`trace_bench.config.safe_yaml`."""
    path = Path(path)
    if not path.exists():
        raise ConfigError("config file not found", file=str(path))
    if path.is_dir():
        raise ConfigError("config path is a directory, expected a YAML or JSON file", file=str(path))
    try:
        size = path.stat().st_size
        if size > MAX_BYTES:
            raise ConfigError(f"the config is {size / 1e6:.1f} MB; the limit is {MAX_BYTES // 1024} KB", file=str(path),
                              hint="a config lists tasks, trainers and settings; data belongs in task files")
        with open(path, encoding="utf-8") as handle:
            text = handle.read(MAX_BYTES + 1)  # a file growing after stat() is still bounded
    except (OSError, UnicodeDecodeError) as exc:
        raise ConfigError(f"cannot read config: {exc}", file=str(path)) from None
    return parse_yaml_text(text, file=str(path))


def parse_yaml_text(text: str, *, file: str | None = None) -> Any:
    """One YAML document (JSON is YAML) from a config's text; ConfigError with line and column."""
    try:
        return load_bounded(text)
    except ConfigError as exc:
        raise exc.with_file(file) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "unknown position"
        problem = exc.problem or exc.context or "invalid YAML"
        raise ConfigError(f"YAML syntax error at {where}: {problem}", file=file) from None
    except yaml.YAMLError as exc:
        raise ConfigError(f"YAML error: {exc}", file=file) from None


def parse_overridden(data: Any, overrides: Sequence[tuple[str, str]] = (), *, file: str | None = None) -> RunConfig:
    """Validate the config document ``data`` with command-line ``overrides`` (flag, text) applied
    first (:mod:`trace_bench.config.overrides`); an error that an override caused names it."""
    if not overrides:
        return parse_config(data, file=file)
    from trace_bench.config.overrides import apply_overrides, blame, parse_overrides

    parsed = parse_overrides(overrides)
    try:
        return parse_config(apply_overrides(data, parsed), file=file)
    except ConfigError as exc:
        raise blame(exc, parsed) from None


def load_config(path: str | Path, overrides: Sequence[tuple[str, str]] = ()) -> RunConfig:
    """Load and validate a config file, with command-line ``overrides`` applied; raises
    :class:`ConfigError` with file (or override) and key path."""
    return parse_overridden(read_config_data(path), overrides, file=str(path))

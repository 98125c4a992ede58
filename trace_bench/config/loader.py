"""Read a YAML/JSON config file into a validated :class:`RunConfig`, or a clear ConfigError."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import yaml
from pydantic import AliasChoices, BaseModel, ValidationError

from trace_bench.config.errors import ConfigError, did_you_mean
from trace_bench.config.models import (
    TOP_LEVEL_KNOBS,
    BudgetConfig,
    LLMConfig,
    PriceConfig,
    RayConfig,
    RoleConfig,
    RunConfig,
    TaskEntry,
)
from trace_bench.config.safe_yaml import MAX_BYTES, MAX_NODES, load_bounded


def _keys_of(model: type[BaseModel]) -> list[str]:
    keys: list[str] = []
    for name, field in model.model_fields.items():
        keys.append(name)
        alias = field.validation_alias
        if isinstance(alias, AliasChoices):
            keys.extend(a for a in alias.choices if isinstance(a, str))
        elif isinstance(alias, str):
            keys.append(alias)
    return sorted(set(keys))


def _model_at(loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model that owns the mapping at ``loc`` (for 'did you mean' on unknown keys)."""
    path = tuple(p for p in loc if not isinstance(p, int))
    table: dict[tuple[str, ...], type[BaseModel]] = {
        (): RunConfig, ("llm",): LLMConfig, ("budget",): BudgetConfig, ("ray",): RayConfig,
        ("tasks",): TaskEntry,
    }
    if len(path) == 3 and path[:2] == ("llm", "roles"):
        return RoleConfig
    if len(path) == 3 and path[:2] == ("llm", "prices"):
        return PriceConfig
    return table.get(path)


def _format_loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _convert(error: ValidationError, data: Any) -> ConfigError:
    first = error.errors()[0]
    loc = tuple(first.get("loc", ()))
    kind = first.get("type", "")
    if kind == "extra_forbidden" and loc:
        key = str(loc[-1])
        owner = _model_at(loc[:-1])
        choices = _keys_of(owner) if owner else []
        if owner is RunConfig:
            choices += list(TOP_LEVEL_KNOBS)
        return ConfigError(f"unknown key '{key}'", key_path=_format_loc(loc), hint=did_you_mean(key, choices))
    if kind == "missing":
        return ConfigError("required key is missing", key_path=_format_loc(loc))
    message = str(first.get("msg", "invalid value"))
    message = message.removeprefix("Value error, ")
    value = first.get("input")
    if kind not in ("model_type", "dict_type", "list_type") and not isinstance(value, (dict, list)):
        message = f"{message} (got {value!r})"
    return ConfigError(message, key_path=_format_loc(loc) or None)


def _reject_non_finite(data: Any, file: str | None) -> None:
    """NaN and infinity anywhere in a config are errors: every run file is strict JSON, which has neither."""
    stack: list[tuple[Any, tuple[Any, ...]]] = [(data, ())]
    budget = 4 * MAX_NODES  # a file is bounded by the loader; a cyclic dict from Python is left to pydantic
    while stack and budget:
        budget -= 1
        value, loc = stack.pop()
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"{value} is not allowed: run files are JSON, which has no NaN or infinity",
                              file=file, key_path=_format_loc(loc) or None, hint="use a finite number or null")
        if isinstance(value, dict):
            stack.extend((v, (*loc, k)) for k, v in value.items())
        elif isinstance(value, list):
            stack.extend((v, (*loc, i)) for i, v in enumerate(value))


def parse_config(data: Any, *, file: str | None = None) -> RunConfig:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"the top level must be a mapping of keys, got {type(data).__name__}", file=file)
    for key in data:
        if not isinstance(key, str):
            raise ConfigError(f"keys must be strings, got {key!r}", file=file)
    _reject_non_finite(data, file)
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise _convert(exc, data).with_file(file) from None
    except (TypeError, ValueError) as exc:  # raised by a 'before' validator on odd shapes
        raise ConfigError(str(exc), file=file) from None


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


def load_config(path: str | Path) -> RunConfig:
    """Load and validate a config file; raises :class:`ConfigError` with file and key path."""
    return parse_config(read_config_data(path), file=str(path))

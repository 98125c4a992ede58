"""Read a YAML/JSON config file into a validated :class:`RunConfig`, or a clear ConfigError."""

from __future__ import annotations

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


def parse_config(data: Any, *, file: str | None = None) -> RunConfig:
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"the top level must be a mapping of keys, got {type(data).__name__}", file=file)
    for key in data:
        if not isinstance(key, str):
            raise ConfigError(f"keys must be strings, got {key!r}", file=file)
    try:
        return RunConfig.model_validate(data)
    except ValidationError as exc:
        raise _convert(exc, data).with_file(file or "<config>") from None
    except (TypeError, ValueError) as exc:  # raised by a 'before' validator on odd shapes
        raise ConfigError(str(exc), file=file) from None


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

"""A pydantic validation error as the one :class:`ConfigError` a user reads: key path, reason, hint.

Generic over the models (the caller says which model owns the mapping at a key path), so that
``config.models`` can validate without importing the loader.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from pydantic import AliasChoices, BaseModel, ValidationError

from trace_bench._util.errors import ConfigError, did_you_mean


def keys_of(model: type[BaseModel]) -> list[str]:
    """Every key ``model`` accepts: field names and their validation aliases."""
    keys: list[str] = []
    for name, field in model.model_fields.items():
        keys.append(name)
        alias = field.validation_alias
        if isinstance(alias, AliasChoices):
            keys.extend(a for a in alias.choices if isinstance(a, str))
        elif isinstance(alias, str):
            keys.append(alias)
    return sorted(set(keys))


def format_loc(loc: tuple[Any, ...]) -> str:
    out = ""
    for part in loc:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def config_error(error: ValidationError, owner_at: Callable[[tuple[Any, ...]], type[BaseModel] | None],
                 root: type[BaseModel], root_extra_keys: Iterable[str] = ()) -> ConfigError:
    """The first problem of ``error``; an unknown key gets a 'did you mean' among the keys of the
    model ``owner_at`` names for its mapping (plus ``root_extra_keys`` at the top level)."""
    first = error.errors()[0]
    loc = tuple(first.get("loc", ()))
    kind = first.get("type", "")
    if kind == "extra_forbidden" and loc:
        key = str(loc[-1])
        owner = owner_at(loc[:-1])
        choices = keys_of(owner) if owner else []
        if owner is root:
            choices += list(root_extra_keys)
        return ConfigError(f"unknown key '{key}'", key_path=format_loc(loc), hint=did_you_mean(key, choices))
    if kind == "missing":
        return ConfigError("required key is missing", key_path=format_loc(loc))
    message = str(first.get("msg", "invalid value"))
    message = message.removeprefix("Value error, ")
    value = first.get("input")
    if kind not in ("model_type", "dict_type", "list_type") and not isinstance(value, (dict, list)):
        message = f"{message} (got {value!r})"
    return ConfigError(message, key_path=format_loc(loc) or None)

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
    if kind not in ("model_type", "dict_type") and not isinstance(value, (dict, list)):
        message = f"{message} (got {value!r})"
    wrong_shape = kind.endswith(("_type", "_parsing"))
    hint = seeds_hint(value) if loc[:1] == ("seeds",) and wrong_shape else None
    return ConfigError(message, key_path=format_loc(loc) or None, hint=hint)


def seeds_hint(value: Any) -> str:
    """How to write ``seeds`` (a YAML list of seed values), from what was written instead."""
    if isinstance(value, int) and not isinstance(value, bool):
        return (f"seeds is a list of seed values: write seeds: [{value}] for the one seed {value}, or "
                f"seeds: [{', '.join(str(i) for i in range(1, value + 1))}] for {value} seeds"
                if 1 < value <= 10 else f"seeds is a list of seed values: write seeds: [{value}]")
    if isinstance(value, str):
        from trace_bench.config.overrides import parse_seeds

        try:
            seeds = parse_seeds(value)
        except ConfigError:
            seeds = []
        if seeds and len(seeds) <= 20:
            return f"write a YAML list: seeds: [{', '.join(str(s) for s in seeds)}]"
    return "write a YAML list of whole numbers, e.g. seeds: [1, 2, 3] (or --seeds 1,2,3 on the command line)"

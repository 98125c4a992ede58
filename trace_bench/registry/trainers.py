"""The one registry of trainers: built-ins, external adapters and entry-point plugins.

Trainer modules import ``opto`` and their libraries lazily, so importing a trainer class to
read its knobs is cheap.  ``list-trainers`` lists only concrete trainers registered here, never
base classes or templates, from the static table of :mod:`trace_bench.registry.trainer_catalog`
(it imports no trainer class).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from functools import lru_cache
from importlib.metadata import entry_points
from typing import Any

from trace_bench.availability import missing_packages
from trace_bench.config.errors import ConfigError, did_you_mean
from trace_bench.registry.trainer_catalog import BUILTIN_TRAINERS, ENTRY_POINT_GROUP

# id -> "module:Class", from the static table that ``list-trainers`` reads.  Order is the listing
# order inside a source.  OPTIONAL_BUILTIN: registered when the module exists in this checkout.
BUILTIN: dict[str, str] = {meta.id: meta.target for meta in BUILTIN_TRAINERS if not meta.optional}
OPTIONAL_BUILTIN: dict[str, str] = {meta.id: meta.target for meta in BUILTIN_TRAINERS if meta.optional}


@dataclass(frozen=True)
class TrainerInfo:
    id: str
    target: str
    source: str
    cls: Any
    reason: str | None

    @property
    def available(self) -> bool:
        return self.reason is None


def _load(target: str) -> Any:
    module_name, _, attr = target.partition(":")
    return getattr(importlib.import_module(module_name), attr)


def _module_exists(target: str) -> bool:
    module_name = target.partition(":")[0]
    try:
        return importlib.util.find_spec(module_name) is not None
    except (ImportError, ValueError):
        return False


@lru_cache(maxsize=1)
def all_trainers() -> dict[str, TrainerInfo]:
    """Every registered trainer by canonical id (loads trainer classes, not their libraries)."""
    import importlib.util  # noqa: F401 - used by _module_exists

    found: dict[str, TrainerInfo] = {}
    targets = dict(BUILTIN)
    targets.update({k: v for k, v in OPTIONAL_BUILTIN.items() if _module_exists(v)})
    plugins: dict[str, str] = {}
    try:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            plugins[ep.name] = ep.value
    except Exception:  # a broken plugin distribution must not break listing
        plugins = {}
    for trainer_id, target in {**targets, **plugins}.items():
        try:
            cls = _load(target)
        except Exception as exc:
            found[trainer_id] = TrainerInfo(trainer_id, target, "plugin" if trainer_id in plugins else "built-in",
                                            None, f"import failed: {type(exc).__name__}: {exc}")
            continue
        source = "plugin" if trainer_id in plugins else getattr(cls, "source", "built-in")
        absent = missing_packages(*getattr(cls, "requires", ()))
        reason = None
        if absent:
            extra = getattr(cls, "extra", None)
            reason = f"install trace-bench[{extra}]" if extra else f"missing {', '.join(absent)}"
        found[getattr(cls, "id", trainer_id)] = TrainerInfo(getattr(cls, "id", trainer_id), target, source, cls, reason)
    found.update(_opto_native(found))
    return found


def _opto_native(found: dict[str, TrainerInfo]) -> dict[str, TrainerInfo]:
    """``opto``'s own trainers when the installed opto has ``opto.trainer`` (read statically, never
    imported here): ids ``opto:<Name>``, plus ``<Name>`` when no trainer above answers to it."""
    from trace_bench.trainers.opto_native import native_trainer_classes

    taken = {trainer_id.lower() for trainer_id in found}
    for info in found.values():
        taken.update(alias.lower() for alias in getattr(info.cls, "aliases", ()) if info.cls is not None)
    return {cls.id: TrainerInfo(cls.id, f"opto.trainer.algorithms:{cls.native.name}", "opto", cls, None)
            for cls in native_trainer_classes(taken)}


def _alias_table() -> dict[str, str]:
    table: dict[str, str] = {}
    for trainer_id, info in all_trainers().items():
        table[trainer_id.lower()] = trainer_id
        for alias in getattr(info.cls, "aliases", ()) if info.cls is not None else ():
            table[alias.lower()] = trainer_id
    return table


def resolve_trainer(name: str) -> TrainerInfo:
    """The trainer for an id or alias; ConfigError with a suggestion when unknown."""
    canonical = _alias_table().get(name.lower())
    if canonical is None:
        hint = did_you_mean(name, list(all_trainers()))
        raise ConfigError(f"unknown trainer '{name}'", key_path="trainers", hint=hint or "see trace-bench list-trainers")
    return all_trainers()[canonical]


def list_trainers(include_unavailable: bool = False) -> list[TrainerInfo]:
    infos = sorted(all_trainers().values(), key=lambda info: info.id.lower())
    return [info for info in infos if include_unavailable or info.available]


def list_optimizers() -> list[dict[str, str]]:
    """Every optimizer name a config may give (``list-trainers --optimizers``): ours with their
    aliases, and ``opto:<Name>`` for each class the installed ``opto.optimizers`` exports."""
    from trace_bench.trainers.optimizers import listed_optimizers

    return listed_optimizers()

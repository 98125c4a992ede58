"""The one registry of trainers: built-ins, external adapters and entry-point plugins.

Trainer modules import ``opto`` and their libraries lazily, so importing a trainer class to
read its knobs is cheap.  ``list-trainers`` lists only concrete trainers registered here, never
base classes or templates, from the static table of :mod:`trace_bench.registry.trainer_catalog`
(it imports no trainer class).
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from trace_bench._util.entry_points import entry_points
from trace_bench._util.errors import ConfigError, did_you_mean
from trace_bench.registry.trainer_catalog import (
    BUILTIN_TRAINERS,
    ENTRY_POINT_GROUP,
    TrainerMetadata,
    unavailable_reason,
)

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
    origin: str | None = None  # where a trainer that is not built in came from (recorded in env.json)

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
    origins: dict[str, str] = {}
    try:
        for ep in entry_points(group=ENTRY_POINT_GROUP):
            plugins[ep.name] = ep.value
            dist = getattr(ep, "dist", None)
            package = f"package {dist.name} {dist.version}" if dist is not None else "an installed package"
            origins[ep.name] = f"{package} (entry point {ep.value})"
    except Exception:  # a broken plugin distribution must not break listing
        plugins, origins = {}, {}
    for trainer_id, target in {**targets, **plugins}.items():
        try:
            cls = _load(target)
        except Exception as exc:
            found[trainer_id] = TrainerInfo(trainer_id, target, "plugin" if trainer_id in plugins else "built-in",
                                            None, f"import failed: {type(exc).__name__}: {exc}", origins.get(trainer_id))
            continue
        source = "plugin" if trainer_id in plugins else getattr(cls, "source", "built-in")
        reason = unavailable_reason(tuple(getattr(cls, "requires", ())), getattr(cls, "extra", None),
                                    getattr(cls, "probe", None))
        found[getattr(cls, "id", trainer_id)] = TrainerInfo(getattr(cls, "id", trainer_id), target, source, cls, reason,
                                                            origins.get(trainer_id))
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
    """The trainer for an id or alias, or for ``module:Class`` (a trainer class in a module that is
    importable from the working directory or the Python path: no packaging needed); ConfigError
    saying what the name is when it is not a trainer (an optimizer, a family of trainers) or
    suggesting the closest one."""
    if not all_trainers.cache_info().currsize:  # nothing loaded yet: a built-in name needs its class only
        builtin = _builtin_alone(name.lower())
        if builtin is not None:
            return builtin
    canonical = _alias_table().get(name.lower())
    if canonical is not None:
        return all_trainers()[canonical]
    if _MODULE_CLASS.match(name) and not name.startswith("opto:"):
        return module_trainer(name)
    reason, hint = _unknown(name)
    raise ConfigError(reason, key_path="trainers", hint=hint)


#: The environment variable that names the built-in trainers a run uses (comma-separated), set by
#: the driver for its job template (``runner.job.template``), which then imports those trainer
#: classes alone instead of every trainer module (~50 ms of every run's path to its first job);
#: unset, it imports them all (a plugin, a ``module:Class`` or an opto trainer named).
TEMPLATE_TRAINERS = "TRACE_BENCH_TEMPLATE_TRAINERS"

#: built-in trainers by lower-case id and alias, from the static table
_BUILTIN_NAMES: dict[str, TrainerMetadata] = {name.lower(): meta for meta in BUILTIN_TRAINERS
                                              for name in (meta.id, *meta.aliases)}


@lru_cache(maxsize=64)
def _builtin_class(name: str) -> tuple[TrainerMetadata, type] | None:
    """The built-in trainer class ``name`` (id or alias, lower case) with only its own module
    imported; None (the full registry decides) when no built-in answers to it, its module is
    absent, or plugins are installed (one may replace it: all are loaded then)."""
    meta = _BUILTIN_NAMES.get(name)
    if meta is None or not meta.present():
        return None
    try:
        if any(True for _ in entry_points(group=ENTRY_POINT_GROUP)):
            return None
        return meta, _load(meta.target)
    except Exception:  # reported by the full registry, as before
        return None


def _builtin_alone(name: str) -> TrainerInfo | None:
    """The built-in trainer ``name`` as :func:`all_trainers` would give it, its class alone imported.
    A run of one PrioritySearch job imported all 17 trainer modules in the driver (~70 ms).  The
    class is cached, its availability is not: a library installed (or put on the path) after a
    first look makes the trainer available, as clearing :func:`all_trainers` does."""
    found = _builtin_class(name)
    if found is None:
        return None
    meta, cls = found
    reason = unavailable_reason(tuple(getattr(cls, "requires", ())), getattr(cls, "extra", None),
                                getattr(cls, "probe", None))
    trainer_id = getattr(cls, "id", meta.id)
    return TrainerInfo(trainer_id, meta.target, getattr(cls, "source", "built-in"), cls, reason)


_MODULE_CLASS = re.compile(r"^[A-Za-z_][\w.]*:[A-Za-z_]\w*$")
_KEY = re.compile(r"[\s_-]+")


def _unknown(name: str) -> tuple[str, str]:
    """(reason, hint) for a name no trainer answers to."""
    from trace_bench.trainers.optimizers import canonical_optimizer

    try:
        optimizer = canonical_optimizer(name) if name and ":" not in name else None
    except ValueError:
        optimizer = None
    if optimizer is not None:
        own = " (or TextGradTrainer, the textgrad library's own loop)" if optimizer == "TextGrad" else ""
        return (f"{name} is an optimizer, not a trainer: put `optimizer: {optimizer}` on a trainer entry such as "
                f"MinibatchAlgorithm{own}",
                f"e.g. trainers: [{{id: MinibatchAlgorithm, optimizer: {optimizer}}}]; trace-bench list-trainers "
                "lists the trainers, list-trainers --optimizers the optimizers")
    members = family_members(name)
    if len(members) > 1:
        return f"'{name}' names a family of trainers: {', '.join(members)}", "pick one of them"
    hint = did_you_mean(name, list(all_trainers()))
    return f"unknown trainer '{name}'", hint or "see trace-bench list-trainers"


def family_members(name: str) -> list[str]:
    """Trainers whose family is ``name`` or whose id starts with it (``GEPA``: GEPA-Base, GEPA-Beam,
    GEPA-UCB, GEPATrainer), sorted; empty for a name shorter than three letters."""
    key = _KEY.sub("", name.lower())
    if len(key) < 3:
        return []
    return sorted(trainer_id for trainer_id, info in all_trainers().items()
                  if _KEY.sub("", str(getattr(info.cls, "family", "") or "").lower()) == key
                  or _KEY.sub("", trainer_id.lower()).startswith(key))


@lru_cache(maxsize=64)
def module_trainer(target: str) -> TrainerInfo:
    """The trainer class at ``module:Class``, imported from the Python path, else from the working
    directory (where a user keeps ``my_module.py``); its id is ``target`` as written."""
    from trace_bench.trainers.base import Trainer

    module_name, _, attr = target.partition(":")
    where = "the working directory and the Python path"
    try:
        module = _import_from_path_or_cwd(module_name)
    except ModuleNotFoundError as exc:
        if exc.name and module_name.split(".")[0] != exc.name.split(".")[0]:
            raise ConfigError(f"trainer module '{module_name}' needs '{exc.name}', which is not installed",
                              key_path="trainers", hint="install it into .venv: uv pip install --python .venv "
                              f"{exc.name}") from None
        raise ConfigError(f"no module '{module_name}' for trainer '{target}' in {where}", key_path="trainers",
                          hint=f"put {module_name.replace('.', '/')}.py in the directory you run trace-bench from, "
                               "or add its directory to PYTHONPATH") from None
    except Exception as exc:  # the user's module raised while importing
        raise ConfigError(f"importing '{module_name}' for trainer '{target}' failed: {type(exc).__name__}: {exc}",
                          key_path="trainers") from None
    cls = getattr(module, attr, None)
    source = getattr(module, "__file__", None) or module_name
    if cls is None:
        raise ConfigError(f"module '{module_name}' ({source}) has no '{attr}'", key_path="trainers",
                          hint=did_you_mean(attr, [n for n in dir(module) if not n.startswith("_")]))
    if not (isinstance(cls, type) and issubclass(cls, Trainer)):
        raise ConfigError(f"'{target}' is not a trainer class", key_path="trainers",
                          hint="subclass trace_bench.trainers.base.Trainer (see docs/adding-trainer.md)")
    reason = unavailable_reason(tuple(getattr(cls, "requires", ())), None, getattr(cls, "probe", None))
    return TrainerInfo(target, target, "module", cls, reason,
                       f"module {module_name} ({source})")


def trainer_origins(trainer_ids: Any) -> dict[str, str]:
    """Where each of these trainers that is not built in came from (a plugin's package and entry
    point, a ``module:Class``'s file), for ``env.json``: a resume that cannot find one says which."""
    origins = {}
    for trainer_id in sorted(set(trainer_ids)):
        try:
            info = resolve_trainer(trainer_id)
        except ConfigError:
            continue
        if info.origin:
            origins[trainer_id] = info.origin
    return origins


def _import_from_path_or_cwd(module_name: str) -> Any:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        top = module_name.split(".")[0]
        here = os.getcwd()
        if exc.name != top or here in sys.path or "" in sys.path:
            raise
        sys.path.append(here)  # what `python -m` would have put first; appended, so it shadows nothing
        importlib.invalidate_caches()
        return importlib.import_module(module_name)


def list_trainers(include_unavailable: bool = False) -> list[TrainerInfo]:
    infos = sorted(all_trainers().values(), key=lambda info: info.id.lower())
    return [info for info in infos if include_unavailable or info.available]


def list_optimizers() -> list[dict[str, str]]:
    """Every optimizer name a config may give (``list-trainers --optimizers``): ours with their
    aliases, and ``opto:<Name>`` for each class the installed ``opto.optimizers`` exports."""
    from trace_bench.trainers.optimizers import listed_optimizers

    return listed_optimizers()

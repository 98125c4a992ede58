"""What the installed ``opto`` offers natively, read from its source files without importing it.

OpenTrace 0.2.x (an editable checkout of its ``experimental`` branch, or 0.1.3.9) ships a trainer
package, ``opto.trainer``; PyPI's ``trace-opt`` 0.1.3.8 does not.  Listing must stay fast and
must not import ``opto`` (``opto.trainer`` pulls in ``opto.optimizers`` and LiteLLM), so this module
finds ``opto`` with :func:`importlib.util.find_spec` and reads ``opto/trainer/algorithms/__init__.py``
and ``opto/optimizers/__init__.py`` with :mod:`ast`: the names they export are the native trainers
and optimizers.  When a config uses a trainer, :func:`signature` follows its class and bases through
their modules and collects the keyword parameters of ``__init__`` and ``train`` (with literal
defaults): the trainer's knobs.  Base classes and templates (:data:`BASES`) are not trainers.
"""

from __future__ import annotations

import ast
import importlib.util
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

BASES = frozenset({"Trainer", "AbstractAlgorithm", "Algorithm", "AlgorithmBase", "SearchTemplate", "Minibatch"})
# Arguments the adapter itself supplies or controls; never knobs a config sets.
HARNESS_ARGS = frozenset({
    "self", "agent", "optimizer", "logger", "guide", "train_dataset", "validate_dataset", "test_dataset",
    "validate_guide", "test_guide", "objective_config", "save_path", "save_frequency", "log_frequency",
    "test_frequency", "num_test_samples",
})
_UNSET = object()
_ROOTS = frozenset({"Trainer", "AbstractAlgorithm", "Algorithm"})


@dataclass(frozen=True)
class NativeTrainer:
    """One trainer class exported by ``opto.trainer.algorithms`` (found from the package's exports)."""

    name: str
    module: str
    original: str
    also_exported_as: tuple[str, ...] = ()


@dataclass(frozen=True)
class NativeSignature:
    """What a native trainer's ``__init__`` and ``train`` take (knobs with opto's literal defaults)."""

    init_knobs: dict[str, Any] = field(default_factory=dict)
    train_knobs: dict[str, Any] = field(default_factory=dict)
    accepts: frozenset[str] = frozenset()
    lineage: tuple[str, ...] = ()


def opto_dirs() -> list[Path]:
    """Where the ``opto`` package lives (no import), or [] when it is not installed."""
    try:
        spec = importlib.util.find_spec("opto")
    except (ImportError, ValueError):
        return []
    return [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []


def _module_file(dotted: str) -> Path | None:
    parts = dotted.split(".")
    if parts[0] != "opto":
        return None
    for root in opto_dirs():
        base = root.joinpath(*parts[1:])
        for candidate in (base.with_suffix(".py"), base / "__init__.py"):
            if candidate.is_file():
                return candidate
    return None


def has_trainer_package() -> bool:
    return _module_file("opto.trainer") is not None


@lru_cache(maxsize=64)
def _parse(path: Path) -> ast.Module | None:
    try:
        return ast.parse(path.read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError):
        return None


def _absolute(module: str | None, level: int, package: str) -> str:
    if not level:
        return module or ""
    base = package.split(".")
    base = base[: len(base) - level + 1]
    return ".".join([*base, module] if module else base)


def _exports(dotted: str) -> dict[str, tuple[str, str]]:
    """Public names of a package ``__init__``: exported name -> (defining module, name there)."""
    path = _module_file(dotted)
    tree = _parse(path) if path else None
    names: dict[str, tuple[str, str]] = {}
    for node in tree.body if tree else []:
        if isinstance(node, ast.ImportFrom):
            source = _absolute(node.module, node.level, dotted)
            for alias in node.names:
                if alias.name != "*":
                    names[alias.asname or alias.name] = (source, alias.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in names:
            for target in node.targets:
                if isinstance(target, ast.Name):
                    names[target.id] = names[node.value.id]
        elif isinstance(node, ast.ClassDef):
            names[node.name] = (dotted, node.name)
    return {name: where for name, where in names.items() if name[:1].isupper()}


def _literal(node: ast.expr | None) -> Any:
    if node is None:
        return _UNSET
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, (ast.Name, ast.Attribute, ast.Call)):
        return None
    try:
        return ast.literal_eval(node)
    except (ValueError, SyntaxError, TypeError):
        return None  # not a literal (e.g. np.inf): left to the library's own default


def _arguments(function: ast.FunctionDef) -> dict[str, Any]:
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults)) + list(args.defaults)
    found = {a.arg: _literal(d) for a, d in zip(positional, defaults, strict=True)}
    found.update({a.arg: _literal(d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)})
    return found


def _class_chain(module: str, name: str, depth: int = 0) -> list[tuple[str, ast.ClassDef]]:
    """The class and its bases that live in ``opto`` modules, nearest first."""
    path = _module_file(module)
    tree = _parse(path) if path else None
    if tree is None or depth > 12:
        return []
    imported = {alias.asname or alias.name: (_absolute(node.module, node.level, module), alias.name)
                for node in tree.body if isinstance(node, ast.ImportFrom) for alias in node.names}
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and node.name == name:
            chain = [(module, node)]
            if name in _ROOTS:  # the generic bases: no knobs of interest, no need to parse further
                return chain
            for base in node.bases:
                if isinstance(base, ast.Name):
                    where = imported.get(base.id, (module, base.id))
                    chain += _class_chain(where[0], where[1], depth + 1)
            return chain
    if name in imported:  # re-exported from another module
        return _class_chain(*imported[name], depth + 1)
    return []


@lru_cache(maxsize=32)
def signature(native: NativeTrainer) -> NativeSignature:
    """Knobs of ``native`` from its class and bases (parses their modules: tens of ms, so only when a
    config uses the trainer, never for listing)."""
    chain = _class_chain(native.module, native.original)
    init: dict[str, Any] = {}
    train: dict[str, Any] = {}
    for _, cls in reversed(chain):  # bases first, so a subclass's default wins
        for item in cls.body:
            if isinstance(item, ast.FunctionDef) and item.name in ("__init__", "train"):
                (init if item.name == "__init__" else train).update(_arguments(item))
    knobs = {k: v for k, v in train.items() if k not in HARNESS_ARGS}
    init_knobs = {k: v for k, v in init.items() if k not in HARNESS_ARGS and k not in knobs}
    return NativeSignature(init_knobs, knobs, frozenset(train) & HARNESS_ARGS, tuple(cls.name for _, cls in chain))


@lru_cache(maxsize=1)
def native_trainers() -> dict[str, NativeTrainer]:
    """Trainers exported by ``opto.trainer.algorithms``, by name; {} without a trainer package.
    Only that package's ``__init__`` is read (a millisecond): listing stays fast."""
    if not has_trainer_package():
        return {}
    names: dict[tuple[str, str], list[str]] = {}
    for name, where in _exports("opto.trainer.algorithms").items():
        if name not in BASES and where[1] not in BASES:
            names.setdefault(where, []).append(name)
    found: dict[str, NativeTrainer] = {}
    for (module, original), exported in names.items():
        name = original if original in exported else exported[0]  # `Old = New` exports New twice
        found[name] = NativeTrainer(name, module, original, tuple(n for n in exported if n != name))
    return found


@lru_cache(maxsize=1)
def native_optimizers() -> tuple[str, ...]:
    """Optimizer names exported by ``opto.optimizers`` (aliases included), sorted."""
    return tuple(sorted(n for n in _exports("opto.optimizers") if n not in ("Optimizer", "AbstractOptimizer")))


def clear_caches() -> None:
    for cached in (native_trainers, native_optimizers, signature, _parse):
        cached.cache_clear()

"""Names that moved: one module ``__getattr__`` answers them and warns once.

A package whose old public names now live elsewhere (the original Trace-Bench's
``trace_bench.runner.BenchRunner``, ``trace_bench.registry.load_task_bundle``, ...) sets
``__getattr__ = relocated_getattr(__name__)``: such a name resolves to where it lives now,
imported on first use, with one :class:`DeprecationWarning` per name and process that says where.
The package names no module of the layer that holds the name: the table of moved names is
registered here (:func:`register`) by :mod:`trace_bench.legacy.names`, which ``import
trace_bench`` imports first.
"""

from __future__ import annotations

import importlib
import threading
import warnings

TYPE_CHECKING = False  # not typing's: ``import trace_bench`` imports this module, typing stays unimported
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
    from typing import Any

_WARNED: set[str] = set()
_LOCK = threading.Lock()
#: package -> {moved name: "module" or "module:attribute" where it lives now}
_TABLES: dict[str, dict[str, str]] = {}


def register(tables: Mapping[str, Mapping[str, str]]) -> None:
    """Add moved names: ``{package: {name: target}}``."""
    with _LOCK:
        for package, table in tables.items():
            _TABLES.setdefault(package, {}).update(table)


def resolve(target: str, name: str) -> Any:
    """``target`` (``"module"`` or ``"module:attribute"``) imported; its attribute ``name`` when
    ``target`` names no attribute of its own."""
    module_name, _, attribute = target.partition(":")
    return getattr(importlib.import_module(module_name), attribute or name)


def relocated_getattr(package: str) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package``: a registered moved ``name`` resolves to its
    target (see :func:`resolve`) with a DeprecationWarning the first time; any other name is an
    AttributeError (so that ``from package import submodule`` goes on to import it)."""

    def __getattr__(name: str) -> Any:  # noqa: N807 - installed as a module's __getattr__
        target = _TABLES.get(package, {}).get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = resolve(target, name)
        key = f"{package}.{name}"
        with _LOCK:
            first = key not in _WARNED
            _WARNED.add(key)
        if first:
            module_name, _, attribute = target.partition(":")
            warnings.warn(f"{key} has moved: import {module_name}.{attribute or name} instead "
                          "(docs/coming-from-original.md lists the original Trace-Bench's names)",
                          DeprecationWarning, stacklevel=2)
        return value

    return __getattr__

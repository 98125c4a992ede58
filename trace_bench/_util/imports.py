"""Importing a Python file that is not on ``sys.path`` (a user's task module, a legacy task package),
and running a callback when a module is first imported (:func:`after_import`).

The module is in ``sys.modules`` under its name while its top level runs, as a normal import
leaves it (dataclasses, pickling and the module's imports of itself look it up there); when the
top level raises, nothing of it stays there, so a fixed file imports afresh on the next try.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import importlib.util
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from types import ModuleType
from typing import Any


def import_file(name: str, source: Path, *, package: Path | None = None) -> ModuleType:
    """Import ``source`` as the module ``name``; with ``package``, as a package whose submodules live there."""
    locations = [str(package)] if package is not None else None
    spec = importlib.util.spec_from_file_location(name, source, submodule_search_locations=locations)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {source}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        for key in [key for key in sys.modules if key == name or key.startswith(name + ".")]:
            del sys.modules[key]
        raise
    return module


class _AfterImport(importlib.abc.MetaPathFinder):
    """Finds ``name`` as the path finder would, and runs ``callback`` on the module once its top
    level has run; then leaves ``sys.meta_path``."""

    def __init__(self, name: str, callback: Callable[[ModuleType], Any]) -> None:
        self.name, self.callback = name, callback

    def find_spec(self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None) -> Any:
        if fullname != self.name:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        spec = importlib.machinery.PathFinder.find_spec(fullname, path, target)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run_top_level, callback = loader.exec_module, self.callback

        def exec_module(module: ModuleType) -> None:
            run_top_level(module)
            callback(module)

        loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def after_import(name: str, callback: Callable[[ModuleType], Any]) -> None:
    """Call ``callback(module)`` right after module ``name`` (found on the path, not yet imported) is
    first imported, before anything else can use it: a job seeds numpy's global generator this way
    without importing numpy when its task never does.  A later call for the same ``name`` replaces
    a pending one."""
    sys.meta_path[:] = [f for f in sys.meta_path if not (isinstance(f, _AfterImport) and f.name == name)]
    sys.meta_path.insert(0, _AfterImport(name, callback))

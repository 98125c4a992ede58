"""Importing a Python file that is not on ``sys.path`` (a user's task module, a legacy task package).

The module is in ``sys.modules`` under its name while its top level runs, as a normal import
leaves it (dataclasses, pickling and the module's imports of itself look it up there); when the
top level raises, nothing of it stays there, so a fixed file imports afresh on the next try.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


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

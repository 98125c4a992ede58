"""Lazy re-exports for package ``__init__`` modules.

The original Trace-Bench exposed functions on its module paths (``trace_bench.registry``,
``trace_bench.matrix``, ``trace_bench.cli``, ...); here those paths are packages whose
``__init__`` must stay free of imports, because the list commands import them.  A package
declares ``name -> "module:attribute"`` and gets a module ``__getattr__`` that imports the
target on first use.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import Any


def lazy_getattr(package: str, table: dict[str, str]) -> Callable[[str], Any]:
    def __getattr__(name: str) -> Any:  # noqa: N807 - installed as a module's __getattr__
        target = table.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module_name, _, attribute = target.partition(":")
        return getattr(importlib.import_module(module_name), attribute or name)

    return __getattr__

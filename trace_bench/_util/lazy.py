"""Deferred imports for heavy modules that ``opto`` imports at module level.

``opto.utils.llm`` runs ``import litellm`` and ``import openai`` at import time (2-10 s on a
2-core machine) although stub runs and list commands never call them.  :func:`defer` puts a
placeholder module into ``sys.modules`` that imports the real one on first attribute access.
The placeholder already carries ``__file__``/``__spec__`` because ``inspect`` (used by
``trace.bundle``) probes every loaded module; ``importlib.util.LazyLoader`` alone fails there.
:func:`exports` does the same for a package's own public names.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from collections.abc import Callable, Mapping
from typing import Any

_LOCK = threading.RLock()


class _DeferredModule(types.ModuleType):
    """A module object that swaps itself for the real module on first use."""

    def __init__(self, name: str, origin: str | None) -> None:
        super().__init__(name)
        object.__setattr__(self, "_deferred_origin", origin)
        object.__setattr__(self, "__file__", origin)

    def _load(self) -> types.ModuleType:
        name = self.__name__
        with _LOCK:
            current = sys.modules.get(name)
            if current is not None and current is not self:
                return current
            sys.modules.pop(name, None)
            try:
                real = importlib.import_module(name)
            except BaseException:
                sys.modules[name] = self
                raise
            return real

    def __getattr__(self, attr: str) -> object:
        if attr.startswith("__") and attr.endswith("__") and attr not in {"__version__", "__all__", "__path__"}:
            raise AttributeError(attr)
        return getattr(self._load(), attr)

    def __dir__(self) -> list[str]:
        return dir(self._load())


def _forwarder(module: str, attr: str) -> object:
    """A callable standing in for ``module.attr`` that imports the module when called.

    Needed for names evaluated at import time of a dependent module, e.g. a return
    annotation ``-> openai.OpenAI`` in ``opto.utils.llm``.
    """

    def forward(*args: object, **kwargs: object) -> object:
        return getattr(load(module), attr)(*args, **kwargs)

    forward.__name__ = attr
    forward.__qualname__ = f"{module}.{attr}"
    return forward


_STAND_INS: dict[str, tuple[str, ...]] = {"openai": ("OpenAI",), "black": ("format_str", "FileMode")}


def defer(*names: str) -> None:
    """Register deferred placeholders for ``names`` unless they are already imported."""
    with _LOCK:
        for name in names:
            if name in sys.modules:
                continue
            try:
                spec = importlib.util.find_spec(name)
            except (ImportError, ValueError):
                spec = None
            if spec is None:
                continue
            placeholder = _DeferredModule(name, spec.origin)
            placeholder.__spec__ = spec
            if spec.submodule_search_locations is not None:
                # ``from pkg import name`` probes ``__path__``; answering from the spec keeps it deferred
                object.__setattr__(placeholder, "__path__", list(spec.submodule_search_locations))
            for attr in _STAND_INS.get(name, ()):
                object.__setattr__(placeholder, attr, _forwarder(name, attr))
            sys.modules[name] = placeholder


def load(name: str) -> types.ModuleType:
    """The real module ``name``, importing it now if only its placeholder is loaded."""
    module = sys.modules.get(name)
    if isinstance(module, _DeferredModule):
        return module._load()
    return importlib.import_module(name)


def is_loaded(name: str) -> bool:
    """True when ``name`` is imported for real (not a placeholder)."""
    module = sys.modules.get(name)
    return module is not None and not isinstance(module, _DeferredModule)


def exports(package: str, table: Mapping[str, str]) -> Callable[[str], Any]:
    """A module ``__getattr__`` for ``package`` that answers its public ``name`` from
    ``table[name]`` (``"module"`` or ``"module:attribute"``), imported on first use: a package
    whose ``__init__`` stays cheap to import (the CLI's list commands, the sandbox's view)."""

    def __getattr__(name: str) -> Any:  # noqa: N807 - installed as a module's __getattr__
        target = table.get(name)
        if target is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        module_name, _, attribute = target.partition(":")
        return getattr(importlib.import_module(module_name), attribute or name)

    return __getattr__

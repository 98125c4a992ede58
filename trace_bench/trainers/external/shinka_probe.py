"""Can ShinkaEvolve run here?  Answered without importing it (``list-trainers`` must stay cheap).

SkyDiscover's ``shinkaevolve`` backend imports four names from ShinkaEvolve (import name
``shinka``): ``shinka.core.runner.EvolutionConfig``, ``shinka.core.AsyncEvolutionRunner``,
``shinka.database.DatabaseConfig`` and ``shinka.launch.LocalJobConfig``.  Importing ``shinka.core``
pulls in its LLM clients (openai, anthropic, google-genai), so availability is read from the
installed source files instead: each module must exist and define (or re-export) its name.
PyPI's ``shinka-evolve`` 0.0.7 (the newest release) has no ``shinka.core.runner`` and calls its
runner ``ShinkaEvolveRunner``; PyPI's ``shinka`` is an unrelated image upscaler.  The job repeats
the check with real imports (:func:`import_shinka`) so a build that passes this reading but breaks
on import fails with the import's own message.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

#: (module, name) pairs the backend imports, in the order a reason lists them.
REQUIRED: tuple[tuple[str, str], ...] = (
    ("shinka.core.runner", "EvolutionConfig"),
    ("shinka.core", "AsyncEvolutionRunner"),
    ("shinka.database", "DatabaseConfig"),
    ("shinka.launch", "LocalJobConfig"),
)
INSTALL_HINT = ("install ShinkaEvolve from its source repository (github.com/SakanaAI/ShinkaEvolve) at a version "
                "that has them, into this environment; PyPI shinka-evolve 0.0.7 does not, and PyPI 'shinka' is an "
                "unrelated package")


def _module_file(roots: list[Path], module: str) -> Path | None:
    parts = module.split(".")[1:]
    for root in roots:
        package = root.joinpath(*parts)
        for candidate in (package / "__init__.py", package.with_suffix(".py")):
            if candidate.is_file():
                return candidate
    return None


def _defines(path: Path, name: str) -> bool:
    text = path.read_text(encoding="utf-8", errors="replace")
    return re.search(rf"\b{re.escape(name)}\b", text) is not None


def missing_names() -> list[str]:
    """What the backend needs and this environment lacks, as ``module`` or ``module.Name``."""
    try:
        spec = importlib.util.find_spec("shinka")
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.submodule_search_locations:
        return ["shinka"]
    roots = [Path(location) for location in spec.submodule_search_locations]
    missing = []
    for module, name in REQUIRED:
        path = _module_file(roots, module)
        if path is None:
            missing.append(module)
        elif not _defines(path, name):
            missing.append(f"{module}.{name}")
    return missing


def unavailable_reason() -> str | None:
    """Why the ``ShinkaEvolve`` trainer cannot run here, or None (skydiscover itself is checked by
    the trainer's ``requires``)."""
    missing = missing_names()
    if not missing:
        return None
    if missing == ["shinka"]:
        return ("ShinkaEvolve (import name 'shinka') is not installed; SkyDiscover's shinkaevolve backend needs "
                f"{', '.join(f'{m}.{n}' for m, n in REQUIRED)}: {INSTALL_HINT}")
    return f"the installed shinka lacks {', '.join(missing)} (SkyDiscover's shinkaevolve backend imports them): " \
           f"{INSTALL_HINT}"


def import_shinka() -> None:
    """Import what the backend imports; ``RuntimeError`` naming the first missing piece."""
    import importlib

    for module, name in REQUIRED:
        try:
            loaded = importlib.import_module(module)
        except ImportError as exc:
            raise RuntimeError(f"cannot import {module} ({exc}): {INSTALL_HINT}") from exc
        if not hasattr(loaded, name):
            raise RuntimeError(f"{module} has no {name}: {INSTALL_HINT}")

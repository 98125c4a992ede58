"""Can ShinkaEvolve run here?  Answered without importing it (``list-trainers`` must stay cheap).

The trainer drives ShinkaEvolve's current API (import name ``shinka``): ``shinka.core`` exports
``EvolutionConfig`` and ``ShinkaEvolveRunner``, ``shinka.database`` ``DatabaseConfig`` and
``shinka.launch`` ``LocalJobConfig``; that is PyPI ``shinka-evolve`` 0.0.7 and ShinkaEvolve's source
since its runner refactor of 2026-03-01 (earlier sources had ``shinka.core.runner`` and
``AsyncEvolutionRunner`` instead; PyPI's ``shinka`` is an unrelated image upscaler).  Importing
``shinka.core`` pulls in its LLM clients (openai, anthropic, google-genai), so availability is read
from the installed source files instead: each module must exist and define (or re-export) its name.
The job repeats the check with real imports (:func:`import_shinka`) so a build that passes this
reading but breaks on import fails with the import's own message.
"""

from __future__ import annotations

import importlib.util
import re
from pathlib import Path

#: (module, name) pairs the backend imports, in the order a reason lists them.
REQUIRED: tuple[tuple[str, str], ...] = (
    ("shinka.core", "EvolutionConfig"),
    ("shinka.core", "ShinkaEvolveRunner"),
    ("shinka.database", "DatabaseConfig"),
    ("shinka.launch", "LocalJobConfig"),
)
INSTALL_HINT = ("install ShinkaEvolve 0.0.7 or its current source into this environment (pip install "
                "shinka-evolve==0.0.7, or pip install git+https://github.com/SakanaAI/ShinkaEvolve); sources before "
                "its 2026-03-01 runner refactor lack them, and PyPI 'shinka' is an unrelated package")


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
    """Why the ``ShinkaEvolve`` trainer cannot run here, or None."""
    missing = missing_names()
    if not missing:
        return None
    if missing == ["shinka"]:
        return ("ShinkaEvolve (import name 'shinka') is not installed; the trainer needs "
                f"{', '.join(f'{m}.{n}' for m, n in REQUIRED)}: {INSTALL_HINT}")
    return f"the installed shinka lacks {', '.join(missing)} (the trainer drives its runner with them): {INSTALL_HINT}"


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

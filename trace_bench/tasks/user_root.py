"""Tasks from a user directory (``--root DIR``).

Three layouts: the original Trace-Bench LLM4AD layout (an ``index.json`` naming task packages,
handled by :mod:`trace_bench.tasks.llm4ad.legacy_root`); task folders as OpenEvolve, SkyDiscover
and ShinkaEvolve ship them (handled by :mod:`trace_bench.tasks.discovery`), which become
``discovery:<folder>``, a subdirectory that is none of them listed unavailable with the reason; or one task per
module: every ``name.py`` or ``name/__init__.py`` that defines ``build_trace_problem`` becomes
``<suite>:name``.  The suite is ``llm4ad`` (the namespace bare task names resolve to) unless the
directory names its own, as a built-in suite package does: an ``__init__.py`` in the directory
with a line ``SUITE = "mysuite"`` (read as text: listing imports nothing).  A root may hold task
folders and modules side by side.  Modules are loaded under unique names with package semantics
(relative imports work) and without editing ``sys.path``.
"""

from __future__ import annotations

import hashlib
import re
import sys
import threading
from pathlib import Path
from types import ModuleType
from typing import Any

from trace_bench._util.errors import ConfigError
from trace_bench._util.imports import import_file
from trace_bench.tasks.spec import TaskSpec

_LOCK = threading.Lock()
_BUILDER = re.compile(r"^def\s+build_trace_problem\s*\(", re.M)
_SUITE = re.compile(r"""^SUITE\s*(?::\s*str\s*)?=\s*["']([^"']*)["']""", re.M)
_SUITE_NAME = re.compile(r"^[a-z][a-z0-9_]*$")
DEFAULT_SUITE = "llm4ad"


def root_suite(root: str | Path) -> str:
    """The suite a task directory names in its ``__init__.py`` (``SUITE = "name"``), else ``llm4ad``;
    ConfigError for a name that is not lower-case letters, digits and underscores."""
    init = Path(root) / "__init__.py"
    try:
        found = _SUITE.search(init.read_text(encoding="utf-8", errors="replace"))
    except OSError:
        return DEFAULT_SUITE
    if found is None:
        return DEFAULT_SUITE
    name = found.group(1)
    if not _SUITE_NAME.match(name):
        raise ConfigError(f"{init}: SUITE = {name!r} is not a suite name (lower-case letters, digits and "
                          "underscores, starting with a letter)", key_path="--root")
    return name


def _check_root(root: Path) -> Path:
    if not root.exists():
        raise ConfigError(f"task root '{root}' does not exist", key_path="--root")
    if not root.is_dir():
        raise ConfigError(f"task root '{root}' is not a directory", key_path="--root")
    return root.resolve()


def discover_root(root: Path) -> list[TaskSpec]:
    root = _check_root(Path(root))
    if (root / "index.json").exists():
        from trace_bench.tasks.llm4ad.legacy_root import discover_root as discover_index

        try:
            return discover_index(root)
        except ValueError as exc:
            raise ConfigError(str(exc), key_path="--root") from None
    from trace_bench.tasks.discovery import folder_spec
    from trace_bench.tasks.discovery.folder import find_folders, is_task_folder

    folders = find_folders(root)
    specs: list[TaskSpec] = [folder_spec(folder) for folder in folders]
    if is_task_folder(root):
        return specs
    listed = {folder.name.split("/")[0] for folder in folders}
    suite = root_suite(root)
    for path in sorted(root.iterdir()):
        if path.is_dir() and (is_task_folder(path) or path.name in listed):
            continue
        source = path / "__init__.py" if path.is_dir() else path
        if path.name.startswith(("_", ".")) or source.suffix != ".py" or not source.exists():
            continue
        try:
            text = source.read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        if not _BUILDER.search(text):  # cheap static check: no import at listing time
            continue
        name = path.stem if path.is_file() else path.name
        specs.append(TaskSpec(id=f"{suite}:{name}", suite=suite, description=f"user task from {source}",
                              module=name, module_path=str(source), tags=("root",)))
    if not specs:
        raise ConfigError(f"task root '{root}' has no index.json, no task folder (OpenEvolve's, SkyDiscover's or "
                          "ShinkaEvolve's layout) "
                          "and no module defining build_trace_problem", key_path="--root")
    return specs


def load_module_from_path(source: Path) -> ModuleType:
    """Import ``source`` under a unique name; a package ``__init__.py`` keeps relative imports."""
    source = Path(source).resolve()
    digest = hashlib.sha256(str(source).encode()).hexdigest()[:10]
    stem = source.parent.name if source.name == "__init__.py" else source.stem
    name = f"trace_bench_user_{re.sub(r'[^0-9A-Za-z_]', '_', stem)}_{digest}"
    with _LOCK:
        if name in sys.modules:
            return sys.modules[name]
        return import_file(name, source, package=source.parent if source.name == "__init__.py" else None)


def build_from_path(spec: TaskSpec, eval_kwargs: dict[str, Any]) -> Any:
    location = Path(spec.module_path or "")
    if "discovery" in spec.tags:
        from trace_bench.tasks.discovery import build_folder

        return build_folder(str(location), eval_kwargs, spec.module)
    task_dir = location if location.is_dir() else location.parent
    if (task_dir.parent / "index.json").exists() and location.is_dir():
        from trace_bench.tasks.llm4ad.legacy_root import load_root_problem

        return load_root_problem(spec, eval_kwargs)
    module = load_module_from_path(Path(spec.module_path or ""))
    builder = getattr(module, spec.builder, None)
    if builder is None:
        raise ImportError(f"{spec.module_path} defines no {spec.builder}()")
    return builder(**eval_kwargs)

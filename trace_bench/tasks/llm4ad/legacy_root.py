"""The original Trace-Bench LLM4AD layout: ``--root benchmarks/LLM4AD/benchmark_tasks``.

The root holds ``index.json`` (a list of entries with at least ``key`` and ``module``, the task's
directory name, plus optional ``task_description``) and one package directory per task whose
``__init__.py`` defines ``build_trace_problem(**eval_kwargs)``.  Task ids are ``llm4ad:<key>``.

Those modules were written for a loader that put the task directory on ``sys.path`` and aliased
``llm4ad_loader``; they use relative imports, absolute imports of sibling files
(``from get_instance import GetData``) and ``import llm4ad_loader``.  We load each directory as a
uniquely named package, put its directory on ``sys.path`` only while its module runs (under a
lock, restored afterwards), and afterwards take the sibling modules it imported back out of
``sys.modules``, so two tasks that both ship a ``get_instance.py`` never see each other's.
``llm4ad_loader.py`` next to the root (or inside it) is registered under that name if present.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from trace_bench._util.imports import import_file
from trace_bench.tasks.spec import TaskSpec, Unavailable, UnavailableKind

_LOCK = threading.RLock()
LOADER_NAME = "llm4ad_loader"


def _read_index(root: Path) -> list[dict[str, Any]]:
    index = root / "index.json"
    if not root.is_dir():
        raise ValueError(f"LLM4AD task root {root} does not exist or is not a directory")
    if not index.is_file():
        raise ValueError(f"LLM4AD task root {root} has no index.json")
    try:
        data = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ValueError(f"{index}: not valid JSON ({exc})") from None
    entries = data.get("tasks", data) if isinstance(data, dict) else data
    if isinstance(entries, dict):  # {key: entry} is accepted too
        entries = [{"key": key, **value} if isinstance(value, dict) else value for key, value in entries.items()]
    if not isinstance(entries, list):
        raise ValueError(f"{index}: expected a list of task entries, got {type(entries).__name__}")
    for number, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise ValueError(f"{index}: entry #{number} is not an object")
        if not isinstance(entry.get("key"), str) or not entry["key"].strip():
            raise ValueError(f"{index}: entry #{number} has no 'key'")
        module = entry.get("module") or entry.get("wrapper")
        if not isinstance(module, str) or not module.strip():
            raise ValueError(f"{index}: entry #{number} ('{entry['key']}') has no 'module'")
    return entries


def _always(reason: Unavailable) -> Callable[[], Unavailable]:
    """An availability check that gives ``reason`` (a task whose directory is missing)."""
    return lambda: reason


def discover_root(root: Path) -> list[TaskSpec]:
    """One spec per index entry; a missing task directory makes that task unavailable, not the root."""
    root = Path(root).resolve()
    specs = []
    for entry in _read_index(root):
        key = entry["key"].strip()
        task_dir = root / str(entry.get("module") or entry.get("wrapper")).strip()
        text = str(entry.get("task_description") or "").strip()
        description = text.splitlines()[0][:160] if text else f"LLM4AD task {key} ({task_dir.name})"
        missing = None if (task_dir / "__init__.py").is_file() else \
            Unavailable(UnavailableKind.NO_DATA, f"{task_dir / '__init__.py'} not found")
        specs.append(TaskSpec(
            id=f"llm4ad:{key}", suite="llm4ad", description=description, module=task_dir.name,
            parameter_kinds=("code",), scoring="the task's own evaluator", module_path=str(task_dir),
            availability=_always(missing) if missing else None, tags=("root", "legacy-llm4ad"),
        ))
    return specs


def _unique_name(task_dir: Path) -> str:
    digest = hashlib.sha256(str(task_dir).encode()).hexdigest()[:10]
    return f"trace_bench_llm4ad_root_{re.sub(r'[^0-9A-Za-z_]', '_', task_dir.name)}_{digest}"


def _register_loader(root: Path) -> None:
    """Make ``import llm4ad_loader`` find the original helper module shipped beside the root."""
    if LOADER_NAME in sys.modules:
        return
    for candidate in (root / f"{LOADER_NAME}.py", root.parent / f"{LOADER_NAME}.py"):
        if candidate.is_file():
            import_file(LOADER_NAME, candidate)
            return


@contextlib.contextmanager
def task_import_scope(task_dir: Path) -> Iterator[None]:
    """Sibling files importable by plain name while the task's code runs; sys.path and modules restored."""
    siblings = {p.stem for p in task_dir.glob("*.py") if p.stem != "__init__"}
    siblings |= {p.name for p in task_dir.iterdir() if p.is_dir() and (p / "__init__.py").is_file()}
    with _LOCK:
        saved_path = list(sys.path)
        saved = {name: sys.modules.pop(name) for name in list(sys.modules)
                 if name.split(".")[0] in siblings}
        sys.path.insert(0, str(task_dir))
        try:
            yield
        finally:
            sys.path[:] = saved_path
            for name in [n for n in sys.modules if n.split(".")[0] in siblings]:
                del sys.modules[name]
            sys.modules.update(saved)


def load_task_module(task_dir: Path) -> ModuleType:
    task_dir = Path(task_dir).resolve()
    source = task_dir / "__init__.py"
    if not source.is_file():
        raise ImportError(f"LLM4AD task directory {task_dir} has no __init__.py")
    name = _unique_name(task_dir)
    with _LOCK:
        if name in sys.modules:
            return sys.modules[name]
        _register_loader(task_dir.parent)
        with task_import_scope(task_dir):
            return import_file(name, source, package=task_dir)


def load_root_problem(spec: TaskSpec, eval_kwargs: dict[str, Any]) -> dict[str, Any]:
    """Import the task's package and call its ``build_trace_problem(**eval_kwargs)``."""
    if not spec.module_path:
        raise ValueError(f"{spec.id}: no task directory recorded")
    task_dir = Path(spec.module_path)
    module = load_task_module(task_dir)
    builder = getattr(module, spec.builder, None)
    if not callable(builder):
        raise ImportError(f"{task_dir / '__init__.py'} defines no {spec.builder}()")
    with task_import_scope(task_dir.resolve()):
        return builder(**eval_kwargs)

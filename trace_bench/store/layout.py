"""Where a run's files lie, without reading any of them: the names of the run directory's
``meta/`` files and the one way to find a run given by path or id.

Kept free of pydantic and of the models (an import of a few milliseconds), so that the CLI finds
a resumed run, once, before it starts the job template and imports the store proper; every
other reader goes through :class:`~trace_bench.store.run_store.RunStore`, which uses these names.
"""

from __future__ import annotations

from pathlib import Path

META_DIR = "meta"
SNAPSHOT_FILE = "config.snapshot.yaml"
MANIFEST_FILE = "manifest.json"
LLM_CACHE_FILE = "llm_cache.sqlite"


def is_run(path: str | Path) -> bool:
    """A run directory: one with a manifest or a config snapshot under ``meta/``."""
    meta = Path(path) / META_DIR
    return (meta / MANIFEST_FILE).exists() or (meta / SNAPSHOT_FILE).exists()


def candidates(reference: str | Path, runs_dir: str | Path) -> list[Path]:
    """Where a run given by ``reference`` (a path, or an id under ``runs_dir``) may be, in order."""
    return [Path(reference), Path(runs_dir) / reference]


def find_run(reference: str | Path, runs_dir: str | Path) -> Path | None:
    """The run ``reference`` names (resolved), or None when neither candidate is a run."""
    for candidate in candidates(reference, runs_dir):
        if is_run(candidate):
            return candidate.resolve()
    return None


def llm_cache_file(run_dir: str | Path) -> Path:
    """The run's LLM cache (SQLite, owned by the LLM layer) when the config names none."""
    return Path(run_dir) / LLM_CACHE_FILE


def snapshot_file(run_dir: str | Path) -> Path:
    """The config snapshot of the run at ``run_dir``."""
    return Path(run_dir) / META_DIR / SNAPSHOT_FILE


def find_runs(runs_dir: str | Path, depth: int = 1) -> list[Path]:
    """The run directories of ``runs_dir`` (or ``runs_dir`` itself when it is a run), sorted; with
    ``depth`` > 1 also those in subdirectories down to that depth, never inside a run."""
    root = Path(runs_dir)
    if not root.is_dir():
        return []
    if is_run(root):
        return [root]
    found: list[Path] = []
    for child in sorted(root.iterdir()):
        if not child.is_dir() or child.name.startswith("."):
            continue
        if is_run(child):
            found.append(child)
        elif depth > 1:
            found.extend(find_runs(child, depth - 1))
    return found

"""What every tab of one UI server shares, and the guard that keeps callbacks from raising.

No callback may take the server down or show a traceback: a run directory can be half-written or
hand-edited at any moment.  :func:`guarded` turns an exception into a readable message in the
callback's message output and leaves the other outputs as they were.
"""

from __future__ import annotations

import functools
import sys
import threading
import traceback
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from trace_bench.ui.discovery import list_runs, run_choices
from trace_bench.ui.launcher import Launcher
from trace_bench.ui.live import ProgressReader
from trace_bench.ui.readers import masked

ALL = "(all)"
_MAX_READERS = 32


@dataclass
class UIContext:
    runs_dir: Path
    tasks_root: str | None
    configs_dir: Path | None
    launcher: Launcher
    _readers: OrderedDict[str, ProgressReader] = field(default_factory=OrderedDict)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def create(cls, runs_dir: str | Path, tasks_root: str | None = None,
               configs_dir: str | Path | None = None) -> UIContext:
        root = Path(runs_dir).resolve()
        root.mkdir(parents=True, exist_ok=True)
        found = Path(configs_dir) if configs_dir else default_configs_dir()
        return cls(root, tasks_root, found, Launcher(root, tasks_root))

    def progress(self, run_dir: str | Path) -> ProgressReader:
        """One incremental reader per followed run (bounded: old ones are dropped)."""
        key = str(Path(run_dir).resolve())
        with self._lock:
            reader = self._readers.get(key)
            if reader is None:
                reader = self._readers[key] = ProgressReader(key)
                while len(self._readers) > _MAX_READERS:
                    self._readers.popitem(last=False)
            self._readers.move_to_end(key)
            return reader

    def run_choices(self) -> list[tuple[str, str]]:
        """(label, run_dir) of every run, newest first; runs this server's launches write say ``running``."""
        return run_choices(self.runs_dir, self.launcher.running_dirs())

    def list_runs(self) -> list[Any]:
        return list_runs(self.runs_dir, self.launcher.running_dirs())

    def config_names(self) -> list[str]:
        """The configs in ``configs_dir``, read afresh on every call (files added later appear)."""
        if self.configs_dir is None or not self.configs_dir.is_dir():
            return []
        return sorted(p.name for p in self.configs_dir.iterdir() if p.suffix in (".yaml", ".yml", ".json"))

    def config_text(self, name: str | None) -> str:
        if not name or self.configs_dir is None:
            return ""
        path = (self.configs_dir / name).resolve()
        if path.parent != self.configs_dir.resolve() or not path.is_file():
            return f"# {name}: no such config in {self.configs_dir}"
        return masked(path.read_text(encoding="utf-8", errors="replace"))


def default_configs_dir() -> Path | None:
    """``./configs`` when the server runs from a checkout, else the package's sibling ``configs``."""
    for candidate in (Path.cwd() / "configs", Path(__file__).resolve().parents[2] / "configs"):
        if candidate.is_dir():
            return candidate
    return None


def guarded(n_outputs: int, message_index: int | None) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Wrap a callback so any exception becomes a message instead of an error toast or a crash."""

    def decorate(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception as exc:  # noqa: BLE001 - the UI must stay up whatever a run dir holds
                import gradio as gr

                print(masked(traceback.format_exc()), file=sys.stderr)
                outputs: list[Any] = [gr.skip() for _ in range(n_outputs)]
                if message_index is not None:
                    outputs[message_index] = f"**Problem:** {masked(f'{type(exc).__name__}: {exc}')}"
                return outputs[0] if n_outputs == 1 else tuple(outputs)

        return wrapper

    return decorate


def preselect(current: str | None, choices: list[tuple[str, str]], index: int = 0) -> str | None:
    """A picker's value: ``current`` while it is still a choice, else the ``index``-th newest run."""
    values = [value for _, value in choices]
    if current in values:
        return current
    return values[index] if len(values) > index else None


def choice_list(values: Any) -> list[str]:
    """A filter dropdown's choices: "(all)" then the sorted distinct non-empty values."""
    return [ALL, *sorted({str(v) for v in values if str(v)})]

"""Task folders as the peers ship them: OpenEvolve, SkyDiscover (plain and containerized) and
ShinkaEvolve layouts (:mod:`.layout`), with their own config (:mod:`.settings`).

A folder becomes the task ``discovery:<name>`` (``<suite>:<name>`` when its config's
``trace_bench.suite`` says so).  Under a parent ``--root``, each subdirectory is looked at, and one
level further inside a subdirectory that is no task itself (SkyDiscover keeps
``heilbronn_convex/13`` and ``heilbronn_convex/14``): the name is then ``heilbronn_convex/13``.  A
subdirectory that is no task folder, or one whose files cannot be used, is still listed (with
``list-tasks --all``), unavailable with the reason, so it neither disappears silently nor hides its
neighbours.

The sandbox receives the folder's files (:meth:`TaskFolder.files`, 4 MB at most) except hidden
entries, caches and the ``private/`` subfolder: data only a split evaluator's trusted ``score()``
reads, in the job process, never where a candidate runs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from trace_bench._util.errors import ConfigError
from trace_bench.tasks.discovery.layout import Layout, detect
from trace_bench.tasks.discovery.settings import FolderSettings, read_settings

PRIVATE = "private"
MAX_FOLDER_BYTES = 4 << 20  # what the sandbox receives of a folder's files
SUITE = "discovery"
_BUILDER = re.compile(r"^def\s+build_trace_problem\s*\(", re.M)


@dataclass(frozen=True)
class TaskFolder:
    """A task folder; ``problem`` says why it cannot be used (``not_task``: it is no task folder)."""

    path: Path
    layout: Layout | None = None
    settings: FolderSettings = field(default_factory=FolderSettings)
    problem: str = ""
    label: str = ""
    not_task: bool = False

    @property
    def name(self) -> str:
        return self.label or self.path.name

    @property
    def task_id(self) -> str:
        return f"{self.settings.suite}:{self.name}"

    @property
    def form(self) -> str:
        """``split`` (trusted scoring) or ``plain`` (the candidate shares a process with its scorer)."""
        return "split" if self.layout is not None and self.layout.trusted else "plain"

    def program_file(self) -> Path | None:
        """The initial program (``initial_program.*``, ``initial_prompt.*``, ShinkaEvolve's
        ``initial.*``); None when the folder has none (the program is written from scratch)."""
        return self.path / self.layout.program if self.layout is not None and self.layout.program else None

    @property
    def program_suffix(self) -> str:
        """The extension the candidate's file gets in the sandbox (the initial program's)."""
        source = self.program_file()
        return source.suffix if source is not None and source.suffix else ".py"

    def initial_program(self) -> str:
        source = self.program_file()
        return source.read_text(encoding="utf-8") if source is not None else ""

    def with_program(self, requested: Any) -> TaskFolder:
        """This folder with the initial program ``eval_kwargs.initial_program`` names (a file inside
        the folder: OpenEvolve and ShinkaEvolve take it on their command line), the found one without."""
        if requested in (None, "") or self.layout is None:
            return self
        relative = Path(str(requested))
        chosen = self.path / relative
        if (relative.is_absolute() or ".." in relative.parts or not chosen.is_file()
                or not chosen.resolve().is_relative_to(self.path.resolve())):
            raise ConfigError(f"eval_kwargs.initial_program: {requested!r} is no file inside {self.path}",
                              key_path="eval_kwargs.initial_program",
                              hint="name the initial program by its path relative to the task folder")
        return replace(self, layout=replace(self.layout, program=relative.as_posix()))

    def with_config(self, requested: Any) -> TaskFolder:
        """This folder with the config file ``eval_kwargs.config`` names (the default one without)."""
        if requested in (None, "") or self.layout is None:
            return self
        settings = read_settings(self.path, self.layout.kind, self.layout.stages, self.layout.protocol, requested)
        return replace(self, settings=replace(settings, suite=self.settings.suite))

    def files(self) -> dict[str, bytes]:
        """The folder's files as the sandbox receives them (relative path -> bytes), see the module
        doc; :class:`ConfigError` past the size limit."""
        found: dict[str, bytes] = {}
        total = 0
        for relative, item in sent_files(self.path):
            data = item.read_bytes()
            total += len(data)
            if total > MAX_FOLDER_BYTES:
                raise _too_big(self.path)
            found[relative] = data
        return found


def sent_files(path: Path) -> list[tuple[str, Path]]:
    """The files of a folder the sandbox receives: no hidden entries, caches or ``private/``."""
    sent = []
    for item in sorted(path.rglob("*")):
        relative = item.relative_to(path)
        if relative.parts and relative.parts[0] == PRIVATE:
            continue
        if item.is_file() and not any(part.startswith(".") or part == "__pycache__" for part in relative.parts):
            sent.append((relative.as_posix(), item))
    return sent


def _too_big(path: Path) -> ConfigError:
    return ConfigError(f"task folder {path} holds more than {MAX_FOLDER_BYTES >> 20} MB outside {PRIVATE}/; the "
                       "sandbox receives the folder with each evaluation (keep large data out of it, or in "
                       f"{PRIVATE}/ when only a split evaluator's score() reads it)", key_path="--root")


def check_size(path: Path) -> None:
    """:class:`ConfigError` when the files the sandbox would receive exceed the limit (sizes only)."""
    total = 0
    for _, item in sent_files(path):
        total += item.stat().st_size
        if total > MAX_FOLDER_BYTES:
            raise _too_big(path)


def load_folder(path: Path, label: str = "") -> TaskFolder:
    """The task folder at ``path``; :class:`ConfigError` when it is none or cannot be used."""
    path = Path(path).resolve()
    layout = detect(path)
    if isinstance(layout, str):
        raise ConfigError(f"{path}: {layout}", key_path="--root")
    settings = read_settings(path, layout.kind, layout.stages, layout.protocol)
    check_size(path)
    return TaskFolder(path, layout, settings, label=label)


def is_task_folder(path: Path) -> bool:
    """Whether ``path`` holds one of the layouts (usable or not: a broken one is still listed)."""
    if not path.is_dir() or path.name.startswith((".", "_")):
        return False
    try:
        return not isinstance(detect(path), str)
    except (ConfigError, OSError):
        return True


def is_module_task(path: Path) -> bool:
    """A package directory of the one-task-per-module layout (``__init__.py`` with a builder)."""
    init = path / "__init__.py"
    try:
        return init.is_file() and _BUILDER.search(init.read_text(encoding="utf-8", errors="replace")) is not None
    except OSError:
        return False


def _broken(path: Path, label: str, reason: str, *, not_task: bool = False) -> TaskFolder:
    return TaskFolder(path.resolve(), problem=" ".join(reason.split()), label=label, not_task=not_task)


def _entry(path: Path, label: str) -> TaskFolder:
    try:
        return load_folder(path, label)
    except ConfigError as exc:
        return _broken(path, label, exc.reason)
    except (OSError, UnicodeDecodeError) as exc:
        return _broken(path, label, f"cannot read {path}: {exc}")


def _visible(path: Path) -> bool:
    return path.is_dir() and not path.name.startswith((".", "_")) and not is_module_task(path)


def find_folders(root: Path) -> list[TaskFolder]:
    """``root`` itself when it is a task folder (its errors raise), else its subdirectories as
    described in the module doc."""
    root = Path(root)
    if is_task_folder(root):
        return [load_folder(root)]
    found: list[TaskFolder] = []
    for child in sorted(root.iterdir()):
        if not _visible(child):
            continue
        if is_task_folder(child):
            found.append(_entry(child, child.name))
            continue
        inner = [_entry(item, f"{child.name}/{item.name}") for item in sorted(child.iterdir())
                 if _visible(item) and is_task_folder(item)]
        if inner:
            found += inner
            continue
        reason = detect(child)
        found.append(_broken(child, child.name, reason if isinstance(reason, str) else "not a task folder",
                             not_task=True))
    return found

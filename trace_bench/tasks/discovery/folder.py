"""Task folders in the layout OpenEvolve's examples and SkyDiscover's benchmarks share.

A folder is a task when it holds ``evaluator.py``; optionally ``initial_program.py`` (the program
to start from; its ``EVOLVE-BLOCK`` is trainable, see :mod:`.program`) and ``config.yaml``.  The
evaluator comes in one of two forms, told apart by reading its source (nothing is imported to
list a folder):

- **split** (trusted scoring): ``run(program_path)`` imports the candidate and returns plain data;
  ``score(data)`` turns that data into the result dict.  ``run`` executes in the sandbox,
  ``score`` in the job process, out of the candidate's reach;
- **plain**: ``evaluate(program_path) -> dict`` does both.  It runs whole in the sandbox, so the
  candidate shares a process with the code that scores it and could change its own score: such
  scores are recorded as *candidate-reachable*.

The result dict: ``combined_score`` drives the search (absent, the average of the finite numeric
metrics, as both libraries rank), every other finite number is a metric kept with the job, and
``artifacts`` (text, or a mapping of texts) becomes feedback.

``config.yaml`` (OpenEvolve's or SkyDiscover's) is read where it maps onto trace-bench:
``prompt.system_message`` becomes the task's objective, ``max_iterations`` the iterations of
OpenEvolve and SkyDiscover jobs whose config leaves ``iterations`` unset, ``evaluator.timeout``
the sandbox's wall limit per evaluation.  Every other key is listed by ``validate --strict``.  An
optional ``trace_bench:`` section declares what the libraries have no key for: ``suite`` (the id
becomes ``<suite>:<folder>`` instead of ``discovery:<folder>``), ``best_known``,
``best_known_source``, ``direction`` (``max``/``min``), ``metric`` (which metric ``best_known``
is a value of; default ``combined_score``) and ``failure_score``.
"""

from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from trace_bench._util.errors import ConfigError

EVALUATOR = "evaluator.py"
INITIAL_PROGRAM = "initial_program.py"
CONFIG = "config.yaml"
SUITE = "discovery"
MAX_FOLDER_BYTES = 4 << 20  # what the sandbox receives of a folder's files
_MAPPED = {"prompt.system_message", "max_iterations", "evaluator.timeout", "language"}
_OWN = ("suite", "best_known", "best_known_source", "direction", "metric", "failure_score")
Form = Literal["split", "plain"]


@dataclass(frozen=True)
class FolderSettings:
    """What a folder's ``config.yaml`` says that trace-bench uses, and the keys it ignores."""

    suite: str = SUITE
    system_message: str = ""
    iterations: int | None = None
    timeout_s: float | None = None
    best_known: float | None = None
    best_known_source: str = ""
    direction: str = "max"
    metric: str = "combined_score"
    failure_score: float | None = None
    ignored: tuple[str, ...] = ()


@dataclass(frozen=True)
class TaskFolder:
    """A task folder; ``problem`` says why it cannot be used (a folder found under ``--root`` whose
    files cannot be read is still listed, with the reason, instead of hiding its neighbours)."""

    path: Path
    form: Form
    settings: FolderSettings = field(default_factory=FolderSettings)
    problem: str = ""

    @property
    def name(self) -> str:
        return self.path.name

    @property
    def task_id(self) -> str:
        return f"{self.settings.suite}:{self.name}"

    def program_file(self) -> Path | None:
        """``initial_program.py``, else the one ``initial_program.<ext>`` (SkyDiscover evolves
        Markdown, C++, ... programs too); None when the folder has none (evolved from scratch).
        :class:`ConfigError` when several other-language programs leave the choice open."""
        python = self.path / INITIAL_PROGRAM
        if python.is_file():
            return python
        others = sorted(item for item in self.path.glob("initial_program.*") if item.is_file())
        if len(others) > 1:
            raise ConfigError(f"task folder {self.path} holds {', '.join(item.name for item in others)}: keep one "
                              "initial program", key_path="--root")
        return others[0] if others else None

    @property
    def program_suffix(self) -> str:
        """The extension the candidate's file gets in the sandbox (the initial program's)."""
        source = self.program_file()
        return source.suffix if source is not None else ".py"

    def initial_program(self) -> str:
        source = self.program_file()
        return source.read_text(encoding="utf-8") if source is not None else ""

    def files(self) -> dict[str, bytes]:
        """The folder's files as the sandbox receives them (relative path -> bytes), without
        caches, hidden entries and ``config.yaml``; :class:`ConfigError` past the size limit."""
        found: dict[str, bytes] = {}
        total = 0
        for relative, item in _sent_files(self.path):
            data = item.read_bytes()
            total += len(data)
            if total > MAX_FOLDER_BYTES:
                raise _too_big(self.path)
            found[relative] = data
        return found


def _sent_files(path: Path) -> list[tuple[str, Path]]:
    """The files of a folder the sandbox receives: no caches, hidden entries or ``config.yaml``."""
    sent = []
    for item in sorted(path.rglob("*")):
        relative = item.relative_to(path)
        if item.is_file() and item.name != CONFIG and not any(
                part.startswith(".") or part == "__pycache__" for part in relative.parts):
            sent.append((relative.as_posix(), item))
    return sent


def _too_big(path: Path) -> ConfigError:
    return ConfigError(f"task folder {path} holds more than {MAX_FOLDER_BYTES >> 20} MB; the sandbox receives "
                       "the whole folder with each evaluation (keep large data out of it)", key_path="--root")


def check_size(path: Path) -> None:
    """:class:`ConfigError` when the files the sandbox would receive exceed the limit (sizes only,
    read from the directory: listing stays cheap)."""
    total = 0
    for _, item in _sent_files(path):
        total += item.stat().st_size
        if total > MAX_FOLDER_BYTES:
            raise _too_big(path)


def evaluator_form(source: str, where: str) -> Form:
    """``split`` when the module defines ``run`` and ``score``, ``plain`` when it defines ``evaluate``."""
    try:
        tree = ast.parse(source, filename=where)
    except SyntaxError as exc:
        raise ConfigError(f"{where} is not valid Python: {exc.msg} (line {exc.lineno})", key_path="--root") from None
    names = {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if {"run", "score"} <= names:
        return "split"
    if "evaluate" in names:
        return "plain"
    raise ConfigError(f"{where} defines neither evaluate(program_path) nor run(program_path) + score(data)",
                      key_path="--root")


def _flatten(data: Any, prefix: str = "") -> list[str]:
    if not isinstance(data, dict):
        return [prefix] if prefix else []
    keys: list[str] = []
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else str(key)
        keys += _flatten(value, path) if isinstance(value, dict) and value else [path]
    return keys


def _number(value: Any, what: str, where: Path) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(float(value)):
        raise ConfigError(f"{where}: {what} must be a finite number, got {value!r}", key_path="trace_bench")
    return float(value)


def _positive(value: Any, what: str, where: Path) -> float:
    number = _number(value, what, where)
    if number <= 0:
        raise ConfigError(f"{where}: {what} must be positive (seconds), got {value!r}", key_path="evaluator.timeout")
    return number


def read_settings(folder: Path) -> FolderSettings:
    """The folder's :class:`FolderSettings` (defaults when it has no ``config.yaml``)."""
    source = folder / CONFIG
    if not source.is_file():
        return FolderSettings()
    import yaml

    try:
        data = yaml.safe_load(source.read_text(encoding="utf-8")) or {}
    except yaml.YAMLError as exc:
        raise ConfigError(f"{source} is not valid YAML: {exc}", key_path="--root") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{source} must be a mapping", key_path="--root")
    own = data.get("trace_bench") or {}
    if not isinstance(own, dict) or set(own) - set(_OWN):
        unknown = sorted(set(own) - set(_OWN)) if isinstance(own, dict) else own
        raise ConfigError(f"{source}: unknown trace_bench keys {unknown}; allowed: {', '.join(_OWN)}",
                          key_path="trace_bench")
    prompt = data.get("prompt") if isinstance(data.get("prompt"), dict) else {}
    evaluator = data.get("evaluator") if isinstance(data.get("evaluator"), dict) else {}
    message = prompt.get("system_message") or ""
    if isinstance(message, str) and message and "\n" not in message and (folder / message).is_file():
        message = (folder / message).read_text(encoding="utf-8")  # SkyDiscover allows a file name here
    iterations = data.get("max_iterations")
    timeout = evaluator.get("timeout")
    direction = str(own.get("direction", "max"))
    if direction not in ("max", "min"):
        raise ConfigError(f"{source}: trace_bench.direction must be max or min, got {direction!r}",
                          key_path="trace_bench.direction")
    suite = str(own.get("suite", SUITE))
    if not suite.replace("_", "").replace("-", "").isalnum():
        raise ConfigError(f"{source}: trace_bench.suite must be a plain name, got {suite!r}",
                          key_path="trace_bench.suite")
    ignored = tuple(key for key in _flatten({k: v for k, v in data.items() if k != "trace_bench"})
                    if key not in _MAPPED)
    return FolderSettings(
        suite=suite, system_message=str(message or ""),
        iterations=int(iterations) if isinstance(iterations, int) and iterations > 0 else None,
        timeout_s=_positive(timeout, "evaluator.timeout", source) if timeout is not None else None,
        best_known=_number(own["best_known"], "best_known", source) if "best_known" in own else None,
        best_known_source=str(own.get("best_known_source", "")), direction=direction,
        metric=str(own.get("metric", "combined_score")),
        failure_score=_number(own["failure_score"], "failure_score", source) if "failure_score" in own else None,
        ignored=ignored)


def is_task_folder(path: Path) -> bool:
    return path.is_dir() and (path / EVALUATOR).is_file() and not path.name.startswith((".", "_"))


def load_folder(path: Path) -> TaskFolder:
    path = Path(path).resolve()
    source = path / EVALUATOR
    form = evaluator_form(source.read_text(encoding="utf-8", errors="replace"), str(source))
    settings = read_settings(path)
    check_size(path)
    return TaskFolder(path, form, settings)


def find_folders(root: Path) -> list[TaskFolder]:
    """``root`` itself when it is a task folder (its errors raise), else each subdirectory that is
    one; a subdirectory whose files cannot be read comes back with its ``problem``."""
    root = Path(root)
    if is_task_folder(root):
        return [load_folder(root)]
    found = []
    for child in sorted(root.iterdir()):
        if not is_task_folder(child):
            continue
        try:
            found.append(load_folder(child))
        except ConfigError as exc:
            found.append(TaskFolder(child.resolve(), "plain", problem=" ".join(exc.reason.split())))
        except (OSError, UnicodeDecodeError) as exc:
            found.append(TaskFolder(child.resolve(), "plain", problem=f"cannot read {child}: {exc}"))
    return found

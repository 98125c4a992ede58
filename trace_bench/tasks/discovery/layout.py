"""Which peer's task-folder layout a directory holds, read from its file names and sources alone.

Four layouts, tried in this order (nothing is imported or executed to tell them apart):

- **evaluator** (OpenEvolve's examples, SkyDiscover's plain benchmarks): ``evaluator.py`` at the
  top, beside ``initial_program.*`` or, for a prompt folder, ``initial_prompt.*``.  Its protocol is
  ``split`` (trace-bench's own ``run(program_path)`` + ``score(data)``) or ``evaluate``
  (``evaluate(program_path)``, with OpenEvolve's optional cascade stages ``evaluate_stage1/2/3``).
- **evaluator directory**: no top-level ``evaluator.py`` but an ``evaluator/`` directory.  With an
  ``evaluate.sh`` (SkyDiscover's containerized benchmarks: ``Dockerfile`` + ``evaluate.sh`` +
  ``evaluator.py``), the Python entry point ``evaluate.sh`` runs (``python /benchmark/X.py
  "$PROGRAM"``) is run as a script (protocol ``script``: SkyDiscover's JSON on stdout), since Docker
  is not used; an ``evaluate.sh`` that runs anything else makes the folder unusable, with the
  reason.  Without one, ``evaluator/evaluator.py`` is an evaluator as above.
- **shinka** (ShinkaEvolve's examples): ``evaluate.py`` defining ``main(program_path,
  results_dir)`` beside ``initial.<ext>`` (protocol ``main``: ``metrics.json`` and ``correct.json``).

Anything else is not a task folder: :func:`detect` returns the reason instead of a layout.
"""

from __future__ import annotations

import ast
import re
import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from trace_bench._util.errors import ConfigError

Kind = Literal["evaluator", "container", "shinka"]
Protocol = Literal["split", "evaluate", "script", "main"]
STAGES = ("evaluate_stage1", "evaluate_stage2", "evaluate_stage3")
CONTAINER_DIR = "evaluator"
CONTAINER_WORKDIR = "/benchmark"  # SkyDiscover's Dockerfiles: WORKDIR /benchmark, COPY . .
_PYTHON = re.compile(r"^python(?:3(?:\.\d+)?)?$")
_PROGRAM_ARGS = ('"$PROGRAM"', "$PROGRAM", '"$1"', "$1", '"${PROGRAM}"', "${PROGRAM}")


@dataclass(frozen=True)
class Layout:
    """A task folder's layout: where its evaluator and initial program are, and how to call it.

    Paths are relative to the folder; ``workdir`` is the directory the evaluator runs in (its
    siblings import each other from there, and relative paths resolve there)."""

    kind: Kind
    evaluator: str
    protocol: Protocol
    workdir: str = ""
    program: str | None = None
    stages: tuple[str, ...] = ()
    peer: str = "OpenEvolve/SkyDiscover"

    @property
    def trusted(self) -> bool:
        """Only the split protocol scores outside the candidate's process."""
        return self.protocol == "split"

    @property
    def prompt(self) -> bool:
        """A prompt folder: the evolved thing is text (``initial_prompt.*``)."""
        return self.program is not None and Path(self.program).name.startswith("initial_prompt")


def _functions(source: str, where: str) -> set[str]:
    try:
        tree = ast.parse(source, filename=where)
    except SyntaxError as exc:
        raise ConfigError(f"{where} is not valid Python: {exc.msg} (line {exc.lineno})", key_path="--root") from None
    return {node.name for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def _read(path: Path) -> str:
    return path.read_text(encoding="utf-8", errors="replace")


def _one(folder: Path, patterns: tuple[str, ...]) -> str | None:
    """The one file matching the first pattern that matches any (``.py`` first); ConfigError for several."""
    for pattern in patterns:
        found = sorted(item for item in folder.glob(pattern) if item.is_file())
        python = [item for item in found if item.suffix == ".py"]
        if python:
            return python[0].name
        if len(found) > 1:
            raise ConfigError(f"task folder {folder} holds {', '.join(item.name for item in found)}: keep one "
                              "initial program", key_path="--root")
        if found:
            return found[0].name
    return None


def script_entry(evaluate_sh: Path) -> str | None:
    """The Python file ``evaluate.sh`` runs on the program (relative to its directory), or None when
    it runs anything else (then only Docker can run the folder)."""
    for raw in _read(evaluate_sh).splitlines():
        line = raw.split("#", 1)[0].strip()
        if not line:
            continue
        try:
            words = shlex.split(line, posix=True)
        except ValueError:
            continue
        if words and words[0] == "exec":
            words = words[1:]
        if len(words) >= 2 and _PYTHON.match(Path(words[0]).name) and words[1].endswith(".py"):
            script = words[1]
            if script.startswith(CONTAINER_WORKDIR + "/"):
                script = script[len(CONTAINER_WORKDIR) + 1:]
            if not script.startswith("/") and ".." not in Path(script).parts:
                return script
    return None


def _evaluator_protocol(source: str, where: str) -> tuple[Protocol, tuple[str, ...]]:
    names = _functions(source, where)
    if {"run", "score"} <= names:
        return "split", ()
    if "evaluate" in names:
        return "evaluate", tuple(stage for stage in STAGES if stage in names)
    raise ConfigError(f"{where} defines neither evaluate(program_path) nor run(program_path) + score(data)",
                      key_path="--root")


def _program(folder: Path) -> str | None:
    """``initial_program.*``, a prompt folder's ``initial_prompt.*``, else ``init_program.*``
    (OpenEvolve takes the file on its command line, and some of its examples name it so)."""
    return _one(folder, ("initial_program.*", "initial_prompt.*", "init_program.*"))


def _container(folder: Path) -> Layout:
    directory = folder / CONTAINER_DIR
    evaluate_sh = directory / "evaluate.sh"
    entry = script_entry(evaluate_sh)
    if entry is None:
        raise ConfigError(f"{evaluate_sh} runs no Python entry point on the program (a line such as `python "
                          f"{CONTAINER_WORKDIR}/evaluator.py \"$PROGRAM\"`): only Docker can run this folder, and "
                          "trace-bench does not use Docker", key_path="--root")
    if not (directory / entry).is_file():
        raise ConfigError(f"{evaluate_sh} runs {entry}, which {directory} does not hold", key_path="--root")
    _functions(_read(directory / entry), str(directory / entry))  # a syntax error is the folder's problem now
    return Layout("container", f"{CONTAINER_DIR}/{entry}", "script", CONTAINER_DIR, _program(folder),
                  peer="SkyDiscover (containerized)")


def _shinka(folder: Path) -> Layout:
    source = folder / "evaluate.py"
    if "main" not in _functions(_read(source), str(source)):
        raise ConfigError(f"{source} defines no main(program_path, results_dir) (ShinkaEvolve's evaluator)",
                          key_path="--root")
    return Layout("shinka", "evaluate.py", "main", "", _one(folder, ("initial.*",)), peer="ShinkaEvolve")


def detect(folder: Path) -> Layout | str:
    """The folder's :class:`Layout`, or why it is not a task folder (a sentence).

    :class:`ConfigError` when it *is* one but cannot be used (a syntax error, an ``evaluate.sh``
    without a Python entry point, several initial programs)."""
    top = folder / "evaluator.py"
    if top.is_file():
        protocol, stages = _evaluator_protocol(_read(top), str(top))
        return Layout("evaluator", "evaluator.py", protocol, "", _program(folder), stages)
    directory = folder / CONTAINER_DIR
    if directory.is_dir():
        if (directory / "evaluate.sh").is_file():
            return _container(folder)
        inner = directory / "evaluator.py"
        if inner.is_file():
            protocol, stages = _evaluator_protocol(_read(inner), str(inner))
            return Layout("evaluator", f"{CONTAINER_DIR}/evaluator.py", protocol, CONTAINER_DIR, _program(folder),
                          stages, peer="SkyDiscover")
    shinka_program = any(item.is_file() for item in folder.glob("initial.*"))
    if (folder / "evaluate.py").is_file() and shinka_program:
        return _shinka(folder)
    return not_a_task(folder)


def not_a_task(folder: Path) -> str:
    """Why a directory is no task folder, naming what it holds."""
    try:
        names = sorted(item.name + ("/" if item.is_dir() else "") for item in folder.iterdir()
                       if not item.name.startswith((".", "__pycache__")))
    except OSError as exc:
        return f"cannot read {folder}: {exc}"
    shown = ", ".join(names[:8]) + (f", ... ({len(names)} entries)" if len(names) > 8 else "")
    hint = ""
    if (folder / "evaluate.py").is_file():
        hint = " (evaluate.py without an initial.<ext> beside it)"
    elif any(item.is_file() for item in folder.glob("initial_program.*")):
        hint = " (an initial program without an evaluator)"
    return ("not a task folder: no evaluator.py (OpenEvolve, SkyDiscover), evaluator/ with evaluate.sh (SkyDiscover, "
            f"containerized) or evaluate.py + initial.<ext> (ShinkaEvolve){hint}; it holds {shown or 'nothing'}")

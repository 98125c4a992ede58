"""Why a task or a trainer cannot run on this machine, as data.

A reason has a kind, and the kind decides what happens to a config that uses it: a missing Python
package is fixable here and now (``pip install``), so it is a config error that says how; a
missing tool, GPU or dataset only makes the task's jobs ``skipped`` (with the message), and a
resumed run retries them once the machine has what they need.  Availability checks return an
:class:`Unavailable` or ``None``; a plain string (older plugins) counts as ``missing_tool``.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from pathlib import Path


class UnavailableKind(str, Enum):
    MISSING_PACKAGE = "missing_package"
    MISSING_TOOL = "missing_tool"
    NO_DATA = "no_data"
    NO_GPU = "no_gpu"
    INVALID_TASK = "invalid_task"  # the task's own files are broken: the user must fix them, like a package

    def __str__(self) -> str:
        return self.value


@dataclass(frozen=True)
class Unavailable:
    """A reason a task cannot run here: its kind and the message shown to the user."""

    kind: UnavailableKind
    message: str

    def __str__(self) -> str:
        return self.message

    @property
    def config_error(self) -> bool:
        """True when the user should fix the environment or the task before running (a missing
        package, a task folder that cannot be read)."""
        return self.kind in (UnavailableKind.MISSING_PACKAGE, UnavailableKind.INVALID_TASK)

    @classmethod
    def coerce(cls, value: Unavailable | str | None) -> Unavailable | None:
        if value is None or isinstance(value, Unavailable):
            return value
        return cls(UnavailableKind.MISSING_TOOL, str(value))


Availability = Callable[[], "Unavailable | str | None"]


def missing_packages(*modules: str) -> list[str]:
    """Top-level import names among ``modules`` that are not installed (no import happens)."""
    absent = []
    for name in modules:
        try:
            found = importlib.util.find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            absent.append(name)
    return absent


def checkout_root() -> Path | None:
    """The source checkout this trace-bench runs from with its own ``.venv`` (a Makefile and a
    ``uv.lock`` beside the package, and this interpreter in ``.venv``), else None."""
    root = Path(__file__).resolve().parents[2]  # trace_bench/_util/availability.py -> the checkout
    if not ((root / "Makefile").is_file() and (root / "uv.lock").is_file()):
        return None
    return root if Path(sys.prefix).resolve() == (root / ".venv").resolve() else None


def install_extra_hint(extra: str) -> str:
    """How to install a trace-bench extra here, as it works when pasted: in a checkout, its make
    targets (``uv sync`` there keeps what else is installed: ``--inexact``; the ``.venv`` has no
    pip); elsewhere pip."""
    root = checkout_root()
    if root is None:
        return f"pip install 'trace-bench[{extra}]'"
    where = "" if Path.cwd().resolve() == root else f" in {root}"
    if extra == "ui":
        return f"run `make ui`{where}: it installs the ui extra, keeping the others, and starts the UI"
    return f"run `make install-all`{where}: every extra, keeping what else you installed"


def requires(*modules: str, extra: str | None = None) -> Callable[[], Unavailable | None]:
    """Availability check: the Python packages a task needs (an install hint when one is missing)."""

    def check() -> Unavailable | None:
        absent = missing_packages(*modules)
        if not absent:
            return None
        hint = f"install trace-bench[{extra}]" if extra else f"pip install {' '.join(absent)}"
        return Unavailable(UnavailableKind.MISSING_PACKAGE, f"missing {', '.join(absent)}: {hint}")

    return check


def requires_executable(name: str, reason: str | None = None,
                        kind: UnavailableKind = UnavailableKind.MISSING_TOOL) -> Callable[[], Unavailable | None]:
    """Availability check: an executable on PATH (``kind`` says what installing it means)."""

    def check() -> Unavailable | None:
        return None if shutil.which(name) else Unavailable(kind, reason or f"{name} not found")

    return check

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
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum


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

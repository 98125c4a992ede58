"""The sandbox's value types: what a caller asks for (limits) and what it gets back (a result).

Kept free of process machinery so that guides and task modules can import them cheaply, and so
that a result can be pickled across the process boundary without pulling in the runner.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["ok", "timeout", "oom", "crash", "error", "denied"]
STATUSES: tuple[str, ...] = ("ok", "timeout", "oom", "crash", "error", "denied")

# How much of the child's output a result carries: enough to debug a failing heuristic, never
# enough to flood an LLM prompt or a results file.
STDOUT_TAIL_CHARS = 4000


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits for one sandboxed call.

    ``memory_mb`` is the address space the call may add on top of the warm interpreter it is
    forked from (numpy alone maps a few hundred MB of virtual memory, so an absolute RLIMIT_AS
    would make the same number mean different things in different processes).  ``cpu_s``
    defaults to ``wall_s``.  ``max_processes=0`` forbids process creation; a positive value
    allows that many fork/exec/spawn calls (counted by the audit hook).
    """

    wall_s: float = 10.0
    cpu_s: float | None = None
    memory_mb: int = 1024
    file_size_mb: int = 16
    max_processes: int = 0
    network: bool = False

    def __post_init__(self) -> None:
        if not (isinstance(self.wall_s, (int, float)) and math.isfinite(self.wall_s) and self.wall_s > 0):
            raise ValueError(f"SandboxLimits.wall_s must be a positive number, got {self.wall_s!r}")
        if self.cpu_s is not None and not (math.isfinite(self.cpu_s) and self.cpu_s > 0):
            raise ValueError(f"SandboxLimits.cpu_s must be positive or None, got {self.cpu_s!r}")
        for name in ("memory_mb", "file_size_mb"):
            if int(getattr(self, name)) <= 0:
                raise ValueError(f"SandboxLimits.{name} must be positive, got {getattr(self, name)!r}")
        if int(self.max_processes) < 0:
            raise ValueError(f"SandboxLimits.max_processes must be >= 0, got {self.max_processes!r}")

    @property
    def effective_cpu_s(self) -> float:
        return float(self.cpu_s if self.cpu_s is not None else self.wall_s)


@dataclass
class SandboxResult:
    """Outcome of one sandboxed call.

    ``status`` is one of: ``ok`` (``value`` holds the target's return value), ``timeout`` (wall
    or CPU limit), ``oom`` (MemoryError, or killed for memory), ``crash`` (died by a signal or
    without a result), ``error`` (an exception; ``error_type``/``message``/``traceback`` say
    which), ``denied`` (an uncaught :class:`PermissionError` raised by a sandbox guard, e.g. a
    write outside the sandbox directory, a fork or a network connection).  ``denied_actions``
    lists every guard refusal, including ones the code caught and survived.
    """

    status: Status
    value: Any = None
    error_type: str | None = None
    message: str = ""
    traceback: str = ""
    stdout: str = ""
    wall_s: float = 0.0
    denied_actions: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.status == "ok"


def tail(text: str, limit: int = STDOUT_TAIL_CHARS) -> str:
    """The last ``limit`` characters of ``text``, marked when something was cut."""
    if len(text) <= limit:
        return text
    return "...[output truncated]...\n" + text[-limit:]

"""The sandbox's value types: what a caller asks for (limits) and what it gets back (a result).

Kept free of process machinery so that guides and task modules can import them cheaply.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Literal

Status = Literal["ok", "timeout", "oom", "crash", "error", "denied"]
STATUSES: tuple[str, ...] = ("ok", "timeout", "oom", "crash", "error", "denied")
# Which boundary of the sandbox a call ran into (see SandboxResult.denial)
Denial = Literal["timeout", "memory", "result_too_large", "forged_result", "file", "network", "process", "syscall"]
DENIALS: tuple[str, ...] = ("timeout", "memory", "result_too_large", "forged_result", "file", "network", "process",
                            "syscall")

# How much of the child's output a result carries: enough to debug a failing heuristic, never
# enough to flood an LLM prompt or a results file.
STDOUT_TAIL_CHARS = 4000


@dataclass(frozen=True)
class SandboxLimits:
    """Resource limits for one sandboxed call.

    ``memory_mb`` is the address space the call may add on top of the warm interpreter it is
    forked from (numpy alone maps a few hundred MB of virtual memory, so an absolute RLIMIT_AS
    would make the same number mean different things in different processes).  ``cpu_s``
    defaults to ``wall_s``.  ``file_size_mb`` bounds each file and, in the strong mode, the
    call's whole private ``/tmp``.  ``max_processes=0`` forbids process creation (threads are
    fine); a positive value allows that many processes alive at once besides the call's own.
    ``network`` only lifts the socket ban: the sandbox has no network interface either way.
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

    def as_dict(self) -> dict[str, Any]:
        return {"wall_s": float(self.wall_s), "cpu_s": self.effective_cpu_s, "memory_mb": int(self.memory_mb),
                "file_size_mb": int(self.file_size_mb), "max_processes": int(self.max_processes),
                "network": bool(self.network)}


@dataclass
class SandboxResult:
    """Outcome of one sandboxed call.

    ``status`` is one of: ``ok`` (``value`` holds the target's return value, decoded from plain
    data and as untrusted as the code that produced it), ``timeout`` (wall or CPU limit),
    ``oom`` (MemoryError, or killed for memory), ``crash`` (died by a signal, or ended without
    a result), ``error`` (an exception; ``error_type``/``message``/``traceback`` say which, or a
    result that was corrupt or too large), ``denied`` (an uncaught refusal of the sandbox: a
    permission error from the OS, or, in the weak mode, from its audit hook).  ``mode`` is
    ``"bwrap"`` or ``"weak"``: the isolation the call ran under.

    ``denial`` names the boundary the call ran into, for records and audits (None when it ran
    into none): ``timeout`` (wall or CPU limit), ``memory`` (memory limit), ``result_too_large``
    (more bytes or values than :data:`.policy.RESULT_MAX_BYTES` / ``RESULT_MAX_VALUES``),
    ``forged_result`` (bytes on the result pipe that are not a result message: the child wrote
    there itself), and, for an uncaught refusal (status ``denied``), what was refused: ``file``
    (opening or changing a path), ``network`` (a socket), ``process`` (fork, exec) or ``syscall``
    (any other refused call).  The first four come from the job's own reading and the trusted
    supervisor; the kind of a refusal is read from the exception the child reported, so it is a
    diagnostic of what the code tried, not a proof.  ``denied_actions`` lists refusals the code
    caught, where the weak mode's audit hook saw them.

    Two figures come from the call's supervisor, outside the call, whatever the code did:
    ``refused`` counts the system calls the seccomp filter refused, by name (the sandbox's own record,
    caught refusals included: :mod:`.refusals`), and ``cpu_s`` is the CPU time the call's processes
    used, as the kernel accounts it (None when the supervisor did not report).  In the strong mode,
    ``write_attempts`` counts the call's attempts to write, create, rename or remove a path outside its
    writable directories, caught or not, as its supervisor heard of them before the kernel refused each
    (:mod:`.attempts`; the first few paths in ``write_attempt_paths``), and ``write_record_closed`` says
    that the call delivered a result whose record lacks the end its child writes before the result: the
    code closed, shut or replaced the record (later attempts went unheard), or forged a line on it.
    """

    status: Status
    value: Any = None
    error_type: str | None = None
    message: str = ""
    traceback: str = ""
    stdout: str = ""
    wall_s: float = 0.0
    denied_actions: list[str] = field(default_factory=list)
    mode: str = ""
    denial: Denial | None = None
    refused: dict[str, int] = field(default_factory=dict)
    cpu_s: float | None = None
    write_attempts: int = 0
    write_attempt_paths: list[str] = field(default_factory=list)
    write_record_closed: bool = False

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def describe(self) -> str:
        """One line for feedback and logs: status, error type and message."""
        head = f"{self.error_type}: {self.message}" if self.error_type else self.message
        return f"{self.status}" + (f" ({head})" if head else "")


def tail(text: str, limit: int = STDOUT_TAIL_CHARS) -> str:
    """The last ``limit`` characters of ``text``, marked when something was cut."""
    if len(text) <= limit:
        return text
    return "...[output truncated]...\n" + text[-limit:]

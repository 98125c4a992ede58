"""Run the Lean 4 toolchain on a candidate and read its diagnostics.

``lake env lean FILE`` inside a Lake project (``eval_kwargs.lean_project`` or env
``TRACE_BENCH_LEAN_PROJECT``, for Mathlib and other dependencies), else ``lean FILE``.  The
candidate is untrusted: Lean's ``#eval`` runs arbitrary IO, so the compiler runs in its own
session (process group killed on timeout) in a temporary directory, with CPU-time, address-space
and file-size limits.  This is not a full sandbox (no network isolation); run real VeriBench jobs
on a machine you are willing to let Lean code touch.

Diagnostics have the form ``FILE:LINE:COL: error: message`` (``warning``/``info`` likewise; a
message may continue on the following lines).
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from trace_bench.processes import communicate_or_kill

_DIAGNOSTIC = re.compile(r"^(?P<file>[^\n:]+):(?P<line>\d+):(?P<col>\d+): (?P<severity>error|warning|info)(?:\([^)]*\))?: "
                         r"(?P<message>.*)$")
PROJECT_ENV = "TRACE_BENCH_LEAN_PROJECT"


@dataclass(frozen=True)
class Diagnostic:
    line: int
    col: int
    severity: str
    message: str

    def render(self) -> str:
        return f"line {self.line}:{self.col}: {self.severity}: {self.message}"


@dataclass
class LeanResult:
    """What one compilation said.  ``crashed`` is a failure without any diagnostic (a malformed run)."""

    returncode: int | None
    diagnostics: list[Diagnostic] = field(default_factory=list)
    timed_out: bool = False
    output: str = ""
    command: list[str] = field(default_factory=list)

    @property
    def errors(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "error"]

    @property
    def sorry_warnings(self) -> list[Diagnostic]:
        return [d for d in self.diagnostics if d.severity == "warning" and "sorry" in d.message]

    @property
    def crashed(self) -> bool:
        return not self.timed_out and self.returncode not in (0, None) and not self.errors

    @property
    def compiled(self) -> bool:
        return not self.timed_out and not self.errors and not self.crashed


def parse_diagnostics(output: str) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    current: dict[str, object] | None = None
    for raw in output.splitlines():
        match = _DIAGNOSTIC.match(raw.strip("\r"))
        if match:
            if current is not None:
                found.append(Diagnostic(**current))  # type: ignore[arg-type]
            current = {"line": int(match.group("line")), "col": int(match.group("col")),
                       "severity": match.group("severity"), "message": match.group("message").strip()}
        elif current is not None and raw.strip():
            current["message"] = f"{current['message']}\n{raw.rstrip()}"
    if current is not None:
        found.append(Diagnostic(**current))  # type: ignore[arg-type]
    return found


def lean_command(file: Path, project: str | None) -> tuple[list[str], str | None]:
    """(argv, cwd): ``lake env lean`` inside a project, else plain ``lean``."""
    if project:
        lake = shutil.which("lake") or "lake"
        return [lake, "env", "lean", str(file)], project
    return [shutil.which("lean") or "lean", str(file)], None


def _limits(cpu_s: int, memory_mb: int | None) -> object:
    def apply() -> None:
        import resource

        os.setsid()
        resource.setrlimit(resource.RLIMIT_CPU, (cpu_s, cpu_s + 1))
        resource.setrlimit(resource.RLIMIT_FSIZE, (64 << 20, 64 << 20))
        if memory_mb:
            resource.setrlimit(resource.RLIMIT_AS, (memory_mb << 20, memory_mb << 20))

    return apply


def run_lean(source: str, *, timeout_s: float = 120.0, project: str | None = None,
             memory_mb: int | None = 8192) -> LeanResult:
    """Compile ``source`` as one file; never raises for compiler failures (they are in the result)."""
    project = project or os.environ.get(PROJECT_ENV) or None
    with tempfile.TemporaryDirectory(prefix="trace-bench-lean-") as tmp:
        file = Path(tmp) / "Candidate.lean"
        file.write_text(source, encoding="utf-8")
        argv, cwd = lean_command(file, project)
        try:
            proc = subprocess.Popen(argv, cwd=cwd or tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                    preexec_fn=_limits(int(timeout_s) + 5, memory_mb))  # noqa: PLW1509
        except OSError as exc:
            return LeanResult(returncode=127, output=f"cannot start {argv[0]}: {exc}", command=argv)
        output, _, timed_out = communicate_or_kill(proc, timeout_s)
        if timed_out:
            return LeanResult(returncode=None, timed_out=True, output=output, command=argv)
        output = output.replace(str(file), "Candidate.lean")
        return LeanResult(returncode=proc.returncode, diagnostics=parse_diagnostics(output), output=output,
                          command=argv)


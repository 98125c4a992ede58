"""Run the Lean 4 toolchain on a candidate, in the sandbox, and read its diagnostics.

``lake env lean FILE`` inside a Lake project (``eval_kwargs.lean_project`` or env
``TRACE_BENCH_LEAN_PROJECT``, for Mathlib and other dependencies), else ``lean FILE``.  The
candidate is untrusted and Lean's ``#eval`` runs arbitrary IO, so the compiler runs in a
sandboxed call (:func:`compile_in_sandbox`): the candidate file in the call's private ``/tmp``,
the toolchain (found on the host with ``lean --print-prefix``) and the project visible read-only,
no network, no key, no other host path, processes and threads allowed (Lean's workers), CPU time,
memory and files limited.  The project must be built beforehand (``lake build``): nothing of it
is writable from the sandbox.

Diagnostics have the form ``FILE:LINE:COL: error: message`` (``warning``/``info`` likewise; a
message may continue on the following lines).
"""

from __future__ import annotations

import functools
import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field
from typing import Any

from trace_bench._util.processes import communicate_or_kill

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


def lean_command(project: str | None) -> tuple[list[str], str | None]:
    """(argv without the file, cwd): ``lake env lean`` inside a project, else plain ``lean`` (the
    toolchain's own binaries)."""
    prefix = toolchain_prefix()
    if project:
        lake = os.path.join(prefix, "bin", "lake") if prefix else shutil.which("lake") or "lake"
        return [lake, "env", "lean"], project
    return [os.path.join(prefix, "bin", "lean") if prefix else shutil.which("lean") or "lean"], None


@functools.cache
def toolchain_prefix() -> str:
    """The Lean toolchain's directory (``lean --print-prefix``, run here: the toolchain is trusted), so
    that the sandbox runs its binaries directly (an ``elan`` proxy would look for ``~/.elan``); "" when
    it cannot tell."""
    lean = shutil.which("lean")
    if lean is None:
        return ""
    try:
        out = subprocess.run([lean, "--print-prefix"], capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    prefix = out.stdout.strip().splitlines()[-1] if out.returncode == 0 and out.stdout.strip() else ""
    return prefix if prefix and os.path.isfile(os.path.join(prefix, "bin", "lean")) else ""


def visible_paths(argv: list[str], project: str | None) -> tuple[str, ...]:
    """Host directories the sandboxed compiler reads: each binary's installation and the project."""
    paths: list[str] = []
    for executable in argv[:1]:
        for path in {executable, os.path.realpath(executable)}:
            paths.append(os.path.dirname(os.path.dirname(os.path.abspath(path))))  # <install>/bin/<exe>
    prefix = toolchain_prefix()
    if prefix:
        paths.append(prefix)
    if project:
        paths.append(os.path.abspath(project))
    return tuple(dict.fromkeys(p for p in paths if os.path.isdir(p)))


def compile_in_sandbox(payload: dict[str, Any]) -> dict[str, Any]:
    """Sandbox target: write the source to the call's /tmp and run the compiler on it."""
    file = "/tmp/Candidate.lean"
    with open(file, "w", encoding="utf-8") as handle:
        handle.write(str(payload["source"]))
    argv = [str(a) for a in payload["argv"]] + [file]
    try:
        proc = subprocess.Popen(argv, cwd=payload.get("cwd") or "/tmp", stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True, env={**os.environ, "LEAN_PATH": ""})
    except OSError as exc:
        return {"returncode": 127, "output": f"cannot start {argv[0]}: {exc}", "timed_out": False}
    output, _, timed_out = communicate_or_kill(proc, float(payload["timeout_s"]))
    return {"returncode": None if timed_out else proc.returncode, "output": (output or "")[-200_000:],
            "timed_out": timed_out}


LEAN_PROCESSES = 64  # the compiler, lake, and their worker threads (each counts against the limit)


def run_lean(source: str, *, timeout_s: float = 120.0, project: str | None = None,
             memory_mb: int | None = 8192) -> LeanResult:
    """Compile ``source`` as one file, sandboxed; never raises for compiler failures (they are in the result)."""
    from trace_bench.sandbox import SandboxLimits, run_sandboxed

    project = project or os.environ.get(PROJECT_ENV) or None
    argv, cwd = lean_command(project)
    limits = SandboxLimits(wall_s=timeout_s + 30, cpu_s=(timeout_s + 5) * 4, memory_mb=memory_mb or 8192,
                           file_size_mb=64, max_processes=LEAN_PROCESSES)
    result = run_sandboxed(f"{__name__}:compile_in_sandbox",
                           {"source": source, "argv": argv, "cwd": cwd, "timeout_s": timeout_s}, limits,
                           paths=visible_paths(argv, project))
    command = [*argv, "Candidate.lean"]
    if result.status == "timeout":
        return LeanResult(returncode=None, timed_out=True, output=result.stdout, command=command)
    value = result.value if result.ok and isinstance(result.value, dict) else None
    if value is None:
        return LeanResult(returncode=-1, output=f"the sandboxed compiler call failed: {result.describe()}",
                          command=command)
    output = str(value.get("output") or "").replace("/tmp/Candidate.lean", "Candidate.lean")
    if value.get("timed_out"):
        return LeanResult(returncode=None, timed_out=True, output=output, command=command)
    code = value.get("returncode")
    return LeanResult(returncode=code if isinstance(code, int) else -1, diagnostics=parse_diagnostics(output),
                      output=output, command=command)

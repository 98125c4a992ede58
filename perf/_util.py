"""Helpers for perf scripts: time commands, print figures and ratios."""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BIN = REPO / ".venv" / "bin"


def time_command(args: list[str], repeat: int = 5, cwd: Path = REPO) -> float:
    """Median wall seconds of ``args`` over ``repeat`` runs (after one warm-up run)."""
    subprocess.run(args, cwd=cwd, capture_output=True, check=False)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        subprocess.run(args, cwd=cwd, capture_output=True, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def python() -> str:
    candidate = BIN / "python"
    return str(candidate) if candidate.exists() else sys.executable


def report(name: str, value: float, unit: str, target: str = "") -> None:
    suffix = f"   (target {target})" if target else ""
    print(f"{name:<48} {value:10.3f} {unit}{suffix}")

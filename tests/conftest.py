"""Test environment: offline, deterministic, no telemetry; helpers to run the real CLI."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("HF_DATASETS_OFFLINE", "1")
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
os.environ.setdefault("RAY_USAGE_STATS_ENABLED", "0")
os.environ.setdefault("RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER", "0")  # Ray binds 127.0.0.1: loopback only

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
USER_TASKS = FIXTURES / "user_tasks"


def run_cli(*args: str, env: dict[str, str | None] | None = None, timeout: float = 600, cwd: Path | None = None,
            check: bool = False) -> subprocess.CompletedProcess[str]:
    """Run ``trace-bench`` as a user would (a fresh process); ``env`` adds variables, or removes
    those given as None.  ``timeout`` only catches a hung command: it is no guess of its duration."""
    merged = {**os.environ, **(env or {})}
    full_env = {name: value for name, value in merged.items() if value is not None}
    proc = subprocess.run([sys.executable, "-m", "trace_bench", *args], capture_output=True, text=True,
                          timeout=timeout, env=full_env, cwd=cwd or REPO)
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
    return proc


@pytest.fixture
def cli():
    return run_cli


def write_config(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def only_run_dir(runs: Path) -> Path:
    dirs = [d for d in runs.iterdir() if d.is_dir()]
    assert len(dirs) == 1, dirs
    return dirs[0]


@pytest.fixture
def drivers() -> Iterator[list[subprocess.Popen[Any]]]:
    """Drivers a test started; whatever is still running when it ends (a failed wait) is killed."""
    from tests.waiting import kill_group

    started: list[subprocess.Popen[Any]] = []
    yield started
    for proc in started:
        kill_group(proc)

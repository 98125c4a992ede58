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

# As in every job process: opto's bundle() calls inspect.stack(), whose standard version scans all of
# sys.modules for every frame; in a test worker (gradio, pandas, hypothesis loaded) importing
# opto.trace took 8.7 s and every bundle made in a test paid the same scan.
from trace_bench._util import fast_inspect  # noqa: E402

fast_inspect.install()

REPO = Path(__file__).resolve().parents[1]
FIXTURES = Path(__file__).resolve().parent / "fixtures"
USER_TASKS = FIXTURES / "user_tasks"


def require(*modules: str) -> None:
    """Skip the calling test module when a module is not installed, without importing it at
    collection as ``pytest.importorskip`` does: every test worker collects every module, and
    importing gradio there cost each worker about 3 s of CPU for tests that run on one."""
    import importlib.util

    for name in modules:
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{name} is not installed", allow_module_level=True)


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


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """``-n auto`` (pyproject's addopts): one test worker more than the machine has cores.  A
    third of the suite's wall time is waiting (a fake provider's latency, a run until its kill
    point, a sandbox's wall limit), which a worker per core left idle: on the 2-core machine the
    runner, chaos, llm and cli tests took 251.6 s with 2 workers (75 % CPU busy) and 220.6 s
    with 3 (88 %), for 4 % more CPU."""
    return (os.cpu_count() or 1) + 1


def pytest_itemcollected(item: pytest.Item) -> None:
    """A module's tests that share a module-scoped fixture (a run, a UI server, a browser) run on
    one test worker, so the fixture is built once: under ``--dist loadgroup`` (pyproject's addopts)
    their module is their group.  Before, the browser tests' server and runs, and the runs of
    the table and power tests, were built once per worker.  (At collection: xdist reads the marks
    in its own ``pytest_collection_modifyitems``.)"""
    info = getattr(item, "_fixtureinfo", None)
    if info is None or any(item.iter_markers("xdist_group")):
        return
    if any(fixture.scope == "module" for defs in info.name2fixturedefs.values() for fixture in defs):
        item.add_marker(pytest.mark.xdist_group(item.nodeid.split("::", 1)[0]))


#: modules of single tests that take a test worker half a minute or more (a notebook, a page of docs)
LONG_SINGLE_TESTS = ("tests/test_notebooks.py", "tests/docs/test_doc_outputs.py")


def _schedule_rank(item: pytest.Item) -> int:
    if any(item.iter_markers("xdist_group")):
        return 0
    return 1 if item.nodeid.split("::", 1)[0] in LONG_SINGLE_TESTS else 2


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The test-worker groups (each runs whole on one worker, up to a minute and a half) and the
    longest single tests are handed out first, the many short tests last, so the workers finish
    together: in collection order the browser and gradio groups (tests/ui) came last, and one worker
    ran them while the others had nothing left.  (``--dist loadgroup`` hands out work in the order
    collected; every worker sorts alike, so they agree on it.)

    Then fail the session, not silently, where ``--dist loadgroup`` cannot see the groups: pytest
    9.2 reads node ids from a field that pytest-xdist 3.8 does not set, so the Ray modules ran on
    two workers at once (one run joined the other's cluster, which shut down under it)."""
    items.sort(key=_schedule_rank)  # stable: collection order within each rank
    if "PYTEST_XDIST_WORKER" not in os.environ or not getattr(config.option, "loadgroup", False):
        return  # groups only mean something to the workers of a --dist loadgroup session
    for item in items:
        if any(item.iter_markers("xdist_group")) and "@" not in item.nodeid:
            raise pytest.UsageError(f"xdist_group is ignored for {item.nodeid}: this pytest and pytest-xdist do not "
                                    "work together (see the pytest pin in pyproject.toml)")

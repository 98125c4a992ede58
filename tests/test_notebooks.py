"""Every notebook runs offline, top to bottom, in a kernel on this interpreter; none is stored with outputs;
every code cell parses and names only commands, flags and ``trace_bench`` names that exist.

The kernel is a kernelspec written to a temporary ``JUPYTER_PATH`` (which outranks user and system
kernelspecs), so the notebooks run on the test's own interpreter whatever Jupyter setup the
machine has.  Runs go to a temporary directory through ``TRACE_BENCH_RUNS``.
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.tasks.arena import check_arena_run
from tests.waiting import PATIENCE_S
from trace_bench.cli.main import build_parser

NOTEBOOKS = sorted((REPO / "notebooks").glob("*.ipynb"))
KERNEL = "trace-bench-tests"
# Notebooks whose run a test checks further: the run the notebook made is the check's input.
RUN_CHECKS = {"08_discovery_arena": check_arena_run}


@pytest.fixture(scope="session")  # cheap: the notebooks need not share a test worker for it
def kernel_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("jupyter")
    spec = root / "kernels" / KERNEL
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "trace-bench tests", "language": "python"}), encoding="utf-8")
    return root


def test_there_are_eight_notebooks() -> None:
    assert [p.stem[:2] for p in NOTEBOOKS] == ["01", "02", "03", "04", "05", "06", "07", "08"]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_is_stored_without_outputs(path: Path) -> None:
    book = json.loads(path.read_text(encoding="utf-8"))
    code = [c for c in book["cells"] if c["cell_type"] == "code"]
    assert code and all(not c["outputs"] and c["execution_count"] is None for c in code)


def _code(path: Path) -> ast.Module:
    book = json.loads(path.read_text(encoding="utf-8"))
    cells = ["".join(c["source"]) for c in book["cells"] if c["cell_type"] == "code"]
    return ast.parse("\n\n".join(cells), filename=str(path))


def _commands(tree: ast.Module) -> list[list[str]]:
    """The literal arguments of every trace-bench command a notebook starts: ``[..., "-m",
    "trace_bench", "run", "--config", ...]`` lists and calls of a helper named ``trace_bench``."""
    found: list[list[str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.List):
            values = [e.value if isinstance(e, ast.Constant) else None for e in node.elts]
            after = values[values.index("trace_bench") + 1:] if "trace_bench" in values else []
            found.extend([[w for w in after if isinstance(w, str)]] if after and isinstance(after[0], str) else [])
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "trace_bench":
            literal = [a.value for a in node.args if isinstance(a, ast.Constant)]
            strings = [w for w in literal if isinstance(w, str)]
            found.extend([strings] if strings else [])
    return found


def _source(module: str) -> Path | None:
    """The file of one of the project's modules, found without importing it (or its package)."""
    base = REPO.joinpath(*module.split("."))
    return next((p for p in (base.with_suffix(".py"), base / "__init__.py") if p.is_file()), None)


def _defines(module: str, name: str) -> bool:
    """Whether ``module`` has a submodule ``name`` or its source names ``name``."""
    source = _source(module)
    if source is None:
        return False
    if _source(f"{module}.{name}") is not None:
        return True
    return re.search(rf"\b{re.escape(name)}\b", source.read_text(encoding="utf-8")) is not None


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_names_only_what_exists(path: Path) -> None:
    tree = _code(path)
    subcommands = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction)).choices
    commands = _commands(tree)
    assert commands or path.stem in {"02_api_walkthrough", "03_task_coverage", "05_full_benchmark_analysis",
                                     "06_multiobjective"}
    for words in commands:
        command, *rest = words
        assert command in subcommands, f"{path.name}: no command 'trace-bench {command}'"
        flags = {w.split("=", 1)[0] for w in rest if w.startswith("--")}
        assert flags <= set(subcommands[command]._option_string_actions), (path.name, command, flags)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("trace_bench"):
            for alias in node.names:
                assert _defines(node.module or "", alias.name), f"{path.name}: {node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("trace_bench"):
                    assert _source(alias.name) is not None, f"{path.name}: {alias.name}"


@pytest.mark.parametrize("path", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_offline(path: Path, kernel_path: Path, tmp_path: Path,
                               monkeypatch: pytest.MonkeyPatch) -> None:
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    pytest.importorskip("ipykernel")
    monkeypatch.setenv("JUPYTER_PATH", str(kernel_path))
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    monkeypatch.setenv("TRACE_BENCH_RUNS", str(tmp_path / "runs"))
    monkeypatch.setenv("MPLBACKEND", "Agg")
    book = nbformat.read(path, as_version=4)
    # per-cell limit: catches a hung cell; how fast notebooks run is perf/'s business, not a test's
    client = nbclient.NotebookClient(book, timeout=PATIENCE_S, kernel_name=KERNEL, allow_errors=False,
                                     resources={"metadata": {"path": str(path.parent)}})
    client.execute()
    errors = [o for c in book.cells if c.cell_type == "code" for o in c.outputs if o.output_type == "error"]
    assert not errors
    check = RUN_CHECKS.get(path.stem)
    if check is not None:
        [run] = [p for p in (tmp_path / "runs").iterdir() if (p / "results.csv").exists()]
        check(run)

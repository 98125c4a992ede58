"""Every notebook runs offline, top to bottom, in a kernel on this interpreter; none is stored with outputs.

The kernel is a kernelspec written to a temporary ``JUPYTER_PATH`` (which outranks user and system
kernelspecs), so the notebooks run on the test's own interpreter whatever Jupyter setup the
machine has.  Runs go to a temporary directory through ``TRACE_BENCH_RUNS``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.tasks.arena import check_arena_run
from tests.waiting import PATIENCE_S

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

"""One real stub run of a small matrix, read by the table, power and frontier tests.

Each module ran its own copy of nearly this config (24 to 32 jobs, about 10 s of a test worker
each); they only read the run, so one serves them all.  The modules that use it carry the
``stub-matrix`` test-worker group, so the run is made once per session.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import only_run_dir, run_cli

#: 2 tasks (one with a held-out test split) x 4 arms x 4 seeds.
STUB_MATRIX = """
mode: stub
seeds: [1, 2, 3, 4]
max_workers: 2
tasks: [internal:code_param, internal:numeric_param]
trainers:
  - {id: PrioritySearch, params_variants: [{ps_steps: 2}]}
  - {id: BasicSearchAlgorithm, params_variants: [{num_steps: 2}, {num_steps: 3}]}
  - NoOpTrainer
"""
STUB_MATRIX_SEEDS = 4
#: the test-worker group of every module that reads :func:`stub_matrix_run`
STUB_MATRIX_GROUP = pytest.mark.xdist_group("stub-matrix")


def run_config(root: Path, config: str) -> Path:
    """Run ``config`` (YAML text) into ``root/runs``; its run directory."""
    (root / "c.yaml").write_text(config)
    run_cli("run", "--config", str(root / "c.yaml"), "--runs-dir", str(root / "runs"), "--quiet", check=True)
    return only_run_dir(root / "runs")


@pytest.fixture(scope="session")
def stub_matrix_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run directory (read only: tests that write make their own run)."""
    return run_config(tmp_path_factory.mktemp("stub-matrix"), STUB_MATRIX)

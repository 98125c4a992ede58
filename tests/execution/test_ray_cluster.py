"""Jobs spread over a multi-node Ray cluster (three nodes on loopback) with the local pool's results,
and an unreachable cluster is a one-line error before anything is written."""

from __future__ import annotations

import csv
import json
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import only_run_dir, run_cli
from tests.execution.ray_diagnostics import run_ray_cli

pytest.importorskip("ray")

# one Ray at a time: local clusters of two test workers would compete for the machine's ports and CPUs
pytestmark = pytest.mark.xdist_group("ray")

CONFIG = """
tasks: [internal:numeric_param]
trainers:
  - id: PrioritySearch
    ps_steps: 1
  - NoOpTrainer
seeds: [1, 2, 3, 4]
max_workers: 2
"""


def _rows(run: Path) -> dict[str, tuple[str, ...]]:
    with open(run / "results.csv", encoding="utf-8") as handle:
        return {r["job_id"]: (r["status"], r["score_initial"], r["score_best"], r["score_final"], r["llm_calls"])
                for r in csv.DictReader(handle)}


@pytest.fixture(scope="module")
def cluster() -> Iterator[Any]:
    from ray.cluster_utils import Cluster

    # Ray's node installs SIGTERM/SIGINT handlers in this (the test) process; put back what was there
    # so later tests do not inherit them (a SIGTERM became a SystemExit inside an unrelated test)
    handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGINT)}
    # the head offers no CPU, so every job lands on one of the two worker nodes
    made = Cluster(initialize_head=True, head_node_args={"num_cpus": 0, "include_dashboard": False})
    try:
        for _ in range(2):
            made.add_node(num_cpus=1)
        made.wait_for_nodes()
        yield made
    finally:
        made.shutdown()
        for sig, handler in handlers.items():
            signal.signal(sig, handler)


@pytest.mark.slow
def test_jobs_spread_over_two_worker_nodes_with_local_results(tmp_path: Path, cluster: Any) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "local"), "--quiet", check=True)
    run_ray_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "ray"), "--executor", "ray",
                "--ray-address", cluster.address, "--quiet", timeout=600)
    local_run, ray_run = only_run_dir(tmp_path / "local"), only_run_dir(tmp_path / "ray")
    assert _rows(local_run) == _rows(ray_run) and len(_rows(ray_run)) == 8
    nodes = _nodes(ray_run)
    assert None not in nodes and len(nodes) == 2, nodes
    assert _nodes(local_run) == {None}, "a local job names no node"


def _nodes(run: Path) -> set[str]:
    return {json.loads((job / "job_meta.json").read_text())["node_id"] for job in (run / "jobs").iterdir()}


def test_a_run_without_an_address_starts_its_own_cluster_beside_a_running_one(tmp_path: Path, cluster: Any) -> None:
    """Plain ``ray.init()`` joins the cluster started last on the machine (recorded in /tmp/ray):
    a run did, and lost every job when that cluster shut down (CI: 12 of 12 "actor died")."""
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    theirs = {node.node_id for node in cluster.list_all_nodes()}
    run_ray_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "own"), "--executor", "ray", "--quiet",
                env={"RAY_ADDRESS": None}, timeout=600)
    own = _nodes(only_run_dir(tmp_path / "own"))
    assert len(own) == 1 and not own & theirs, (own, theirs)


def test_unreachable_cluster_is_a_one_line_error_before_the_run(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--executor", "ray",
                   "--ray-address", "127.0.0.1:1", timeout=300)
    assert proc.returncode == 2, proc.stderr
    assert "cannot connect to the Ray cluster at 127.0.0.1:1" in proc.stderr and "Free space" not in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "runs").exists()

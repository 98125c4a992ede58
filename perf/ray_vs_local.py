"""The 200-job stub matrix (configs/perf_matrix_200.yaml) on the local pool and on a local 2-CPU Ray
cluster, side by side: wall times, their ratio (target <= 1.5) and whether the results agree.

    .venv/bin/python perf/ray_vs_local.py [--rounds N]

Two Ray figures: against a running local cluster (started here once, bound to 127.0.0.1, reached with
``--ray-address``: how a user with a cluster runs), and with the run starting its own cluster (its
start-up, 10-40 s on a loaded 2-core machine, is then part of the wall time). Rounds alternate the
executors so that load on the machine affects them alike.
"""

from __future__ import annotations

import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _util import REPO, python, report

CONFIG = REPO / "configs" / "perf_matrix_200.yaml"
COMPARED = ("status", "score_initial", "score_best", "score_final", "llm_calls", "tokens")


def run(executor: str, runs: Path, address: str | None = None) -> tuple[float, dict[str, tuple[str, ...]]]:
    env = {**os.environ, "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0", "RAY_USAGE_STATS_ENABLED": "0",
           "HF_HUB_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    args = [python(), "-m", "trace_bench", "run", "--config", str(CONFIG), "--runs-dir", str(runs), "--quiet",
            "--executor", executor, "--max-workers", "2", *(["--ray-address", address] if address else [])]
    start = time.perf_counter()
    subprocess.run(args, cwd=REPO, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - start
    run_dir = next(runs.iterdir())
    with open(run_dir / "results.csv", encoding="utf-8") as handle:
        rows = {r["job_id"]: tuple(r.get(k, "") for k in COMPARED) for r in csv.DictReader(handle)}
    return wall, rows


def main() -> None:
    os.environ["RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER"] = "0"
    from ray.cluster_utils import Cluster

    rounds = int(sys.argv[sys.argv.index("--rounds") + 1]) if "--rounds" in sys.argv else 1
    walls: dict[str, list[float]] = {"local": [], "cluster": [], "own": []}
    same = True
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 2, "include_dashboard": False})
    try:
        for _ in range(rounds):
            with tempfile.TemporaryDirectory() as tmp:
                local_wall, local_rows = run("local", Path(tmp) / "local")
                cluster_wall, cluster_rows = run("ray", Path(tmp) / "cluster", cluster.address)
            walls["local"].append(local_wall)
            walls["cluster"].append(cluster_wall)
            same = same and local_rows == cluster_rows and len(local_rows) == 200
    finally:
        cluster.shutdown()
    os.environ.pop("RAY_ADDRESS", None)
    with tempfile.TemporaryDirectory() as tmp:
        own_wall, own_rows = run("ray", Path(tmp) / "own")
    walls["own"].append(own_wall)
    same = same and own_rows == local_rows
    local, on_cluster, own = min(walls["local"]), min(walls["cluster"]), min(walls["own"])
    report("200 jobs, local pool, 2 workers: wall (best)", local, "s")
    report("200 jobs, Ray (running 2-CPU cluster), 2 workers", on_cluster, "s")
    report("Ray (running cluster) / local wall ratio", on_cluster / local, "x", "<= 1.5")
    report("200 jobs, Ray starting its own cluster", own, "s")
    report("Ray (own cluster) / local wall ratio", own / local, "x")
    print(f"results identical (status, scores, calls, tokens): {same}")


if __name__ == "__main__":
    main()

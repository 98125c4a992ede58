"""The Ray executor gives the same results as the local pool (local 2-CPU Ray cluster)."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from tests.conftest import only_run_dir, run_cli
from tests.execution.ray_diagnostics import run_ray_cli
from tests.waiting import PATIENCE_S

pytest.importorskip("ray")

# One Ray at a time (both Ray modules run in one test worker: two local clusters would compete for
# ports and CPUs).  Starting a local Ray cluster takes ~11 s on an idle 2-core machine and minutes on a loaded one.
pytestmark = [pytest.mark.slow, pytest.mark.timeout(900), pytest.mark.xdist_group("ray")]

CONFIG = """
tasks: [internal:numeric_param, internal:multi_param]
trainers:
  - id: PrioritySearch
    ps_steps: 1
  - NoOpTrainer
seeds: [1, 2, 3]
max_workers: 2
"""


def _scores(run: Path) -> dict[str, tuple[str, ...]]:
    with open(run / "results.csv", encoding="utf-8") as handle:
        return {r["job_id"]: (r["status"], r["score_initial"], r["score_best"], r["score_final"], r["llm_calls"])
                for r in csv.DictReader(handle)}


def test_twelve_jobs_same_scores_local_and_ray(tmp_path: Path) -> None:
    """Two tasks x two trainers x three seeds: more jobs than Ray workers, every job compared."""
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "local"), "--quiet", check=True,
            timeout=PATIENCE_S)
    run_ray_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "ray"), "--executor", "ray", "--quiet",
                timeout=2 * PATIENCE_S, env={"RAY_USAGE_STATS_ENABLED": "0"})
    local, ray = _scores(only_run_dir(tmp_path / "local")), _scores(only_run_dir(tmp_path / "ray"))
    assert len(local) == 12 and local == ray
    ray_run = only_run_dir(tmp_path / "ray")
    job = next(iter(ray))
    assert (ray_run / "jobs" / job / "artifacts" / "curve.csv").exists(), "files come back to the driver"


def test_a_lost_worker_is_reported_with_rays_cause_first() -> None:
    """The console shows one line per failed task: it must say why the actor died (OOM, a kill),
    not Ray's opening sentence, which is the same for every death."""
    from ray.core.generated.common_pb2 import ActorDiedErrorContext
    from ray.exceptions import ActorDiedError

    from trace_bench.execution.ray_executor import death_reason

    cause = ("The actor is dead because its worker process has died. Worker exit type: NODE_OUT_OF_MEMORY "
             "Worker exit detail: Task was killed due to the node running low on memory.")
    error = ActorDiedError(ActorDiedErrorContext(class_name="JobSlot", actor_id=b"\x01" * 16, pid=4242,
                                                 node_ip_address="127.0.0.1", error_message=cause))
    reason = death_reason(error)
    assert reason == cause, reason
    assert death_reason(ActorDiedError()) == "The actor died unexpectedly before finishing this task."
    assert death_reason(RuntimeError("node gone\nmore")) == "node gone more"

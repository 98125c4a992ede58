"""A job process that exits through ``os._exit`` still releases what it created."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import only_run_dir, run_cli

TASK = '''
import multiprocessing

from opto import trace

from trace_bench.tasks.guide import Guide

LOCKS = []


class Distance(Guide):
    def get_feedback(self, query, response, reference=None, **kwargs):
        return -abs(float(response) - 5.0), "distance to 5"


def build_trace_problem(**eval_kwargs):
    LOCKS.append(multiprocessing.Lock())  # as tqdm does for its write lock under datasets
    return {"param": trace.node(0.0, name="x", trainable=True), "guide": Distance(),
            "train_dataset": {"inputs": [0], "infos": [0]}, "stub_candidates": [2.0, 4.0]}
'''


def test_semaphores_made_by_a_job_are_not_reported_leaked(tmp_path: Path) -> None:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "locking.py").write_text(TASK)
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [locking]\nseeds: [1, 2]\nmax_workers: 2\ntrainers: [NoOpTrainer]\n")
    proc = run_cli("run", "--config", str(config), "--root", str(tmp_path / "tasks"), "--runs-dir",
                   str(tmp_path / "runs"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    assert only_run_dir(tmp_path / "runs").is_dir()
    assert "leaked semaphore" not in proc.stderr, proc.stderr

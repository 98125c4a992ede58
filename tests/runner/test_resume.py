"""Resume: a run killed with SIGKILL at any instant is completed with every job exactly once."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, USER_TASKS, only_run_dir, run_cli
from tests.waiting import count_events, job_pids, kill_group, wait_gone, wait_until

CONFIG = """
run_id: resume-run
tasks:
  - id: slow_numeric
    eval_kwargs: {delay: 0.08}
trainers:
  - id: PrioritySearch
    ps_steps: 2
seeds: [1, 2, 3, 4, 5, 6]
max_workers: 2
"""


def _rows(run: Path) -> list[dict[str, str]]:
    with open(run / "results.csv", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _all_json_valid(run: Path) -> None:
    for path in run.rglob("*.json"):
        json.loads(path.read_text())


KILL_POINTS = {
    # as soon as the run directory holds its lock: nothing slow may happen before it is resumable
    "locked": lambda run: (run / ".lock").exists(),
    "manifest_written": lambda run: (run / "meta" / "manifest.json").exists(),
    "first_job_started": lambda run: count_events(run / "events.jsonl", "job_started") >= 1,
    "three_jobs_finished": lambda run: count_events(run / "events.jsonl", "job_finished") >= 3,
}


@pytest.mark.parametrize("point", list(KILL_POINTS))
def test_sigkill_then_resume_completes_each_job_once(tmp_path: Path, point: str) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    runs = tmp_path / "runs"
    run = runs / "resume-run"
    proc = subprocess.Popen(
        [sys.executable, "-m", "trace_bench", "run", "--config", str(config), "--root", str(USER_TASKS),
         "--runs-dir", str(runs), "--quiet"],
        cwd=REPO, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
    )
    try:
        wait_until(lambda: KILL_POINTS[point](run), what=f"kill point {point}", process=proc)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    finally:
        kill_group(proc)
    wait_gone(job_pids(run, unfinished_only=True), what="job processes of the killed driver")
    before = {r["job_id"]: r for r in _rows(run)} if (run / "results.csv").exists() else {}
    # Between taking the lock and writing meta/ the directory is not yet a run --resume can find;
    # running the same command again (same run_id) continues it at every instant.
    again = ["--config", str(config)] if point == "locked" else ["--resume", str(run)]
    resumed = run_cli("run", *again, "--runs-dir", str(runs), "--root", str(USER_TASKS), "--quiet")
    assert resumed.returncode == 0, resumed.stderr
    rows = _rows(run)
    ids = [r["job_id"] for r in rows]
    assert len(ids) == 6 and len(set(ids)) == 6
    assert all(r["status"] == "ok" for r in rows)
    for job_id, row in before.items():
        if row["status"] == "ok":  # a finished job is kept, not run again
            assert next(r for r in rows if r["job_id"] == job_id)["finished_at"] == row["finished_at"]
    _all_json_valid(run)
    summary = json.loads((run / "summary.json").read_text())
    assert summary["counts"] == {"ok": 6} and summary["finished_jobs"] == 6


def test_resume_modes(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("run_id: fixed-run\ntasks: [internal:numeric_param, internal:non_trainable]\n"
                      "trainers: [NoOpTrainer]\n")
    runs = tmp_path / "runs"
    first = run_cli("run", "--config", str(config), "--runs-dir", str(runs), "--quiet")
    assert first.returncode == 1
    run = runs / "fixed-run"
    stamp = {r["job_id"]: r["finished_at"] for r in _rows(run)}
    # auto: the ok job is kept, the failed one runs again
    run_cli("run", "--config", str(config), "--runs-dir", str(runs), "--quiet")
    after = {r["job_id"]: r for r in _rows(run)}
    ok_id = next(k for k, r in after.items() if r["status"] == "ok")
    failed_id = next(k for k, r in after.items() if r["status"] == "failed")
    assert after[ok_id]["finished_at"] == stamp[ok_id]
    assert after[failed_id]["finished_at"] != stamp[failed_id]
    assert len(after) == 2
    # failed: only the failed job again
    run_cli("run", "--config", str(config), "--runs-dir", str(runs), "--resume", "failed", "--quiet")
    again = {r["job_id"]: r for r in _rows(run)}
    assert again[ok_id]["finished_at"] == stamp[ok_id]
    # --force: everything again
    run_cli("run", "--config", str(config), "--runs-dir", str(runs), "--force", "--quiet")
    forced = {r["job_id"]: r for r in _rows(run)}
    assert forced[ok_id]["finished_at"] != stamp[ok_id]
    assert len(forced) == 2


def test_resume_refuses_a_different_config(tmp_path: Path) -> None:
    runs = tmp_path / "runs"
    a = tmp_path / "a.yaml"
    a.write_text("tasks: [internal:numeric_param]\ntrainers: [NoOpTrainer]\n")
    run_cli("run", "--config", str(a), "--runs-dir", str(runs), "--quiet", check=True)
    run = only_run_dir(runs)
    b = tmp_path / "b.yaml"
    b.write_text("tasks: [internal:numeric_param]\ntrainers: [NoOpTrainer]\nbudget: {llm_calls: 3}\n")
    proc = run_cli("run", "--config", str(b), "--runs-dir", str(runs), "--resume", run.name)
    assert proc.returncode == 2 and "config differs" in proc.stderr
    missing = run_cli("run", "--resume", "no-such-run", "--runs-dir", str(runs))
    assert missing.returncode == 2 and "no run 'no-such-run'" in missing.stderr

"""Chaos: SIGKILL the driver at random instants of a 50-job run, resume after each kill.

Every job must end exactly once in results.csv, no JSON file may be corrupt, and a job that was
interrupted mid-way carries the LLM budget it already spent into its next attempt.
"""

from __future__ import annotations

import csv
import json
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.conftest import REPO, USER_TASKS

pytestmark = pytest.mark.chaos

CONFIG = """
run_id: chaos-run
tasks:
  - id: slow_numeric
    eval_kwargs: {delay: 0.02}
  - internal:multi_param
trainers:
  - id: PrioritySearch
    ps_steps: 2
  - id: NoOpTrainer
seeds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]
max_workers: 2
"""


def _start(args: list[str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen([sys.executable, "-m", "trace_bench", *args], cwd=REPO, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL, start_new_session=True)


def _check_json(run: Path) -> int:
    count = 0
    for path in run.rglob("*.json"):
        json.loads(path.read_text())
        count += 1
    return count


def test_ten_random_kills_then_resume(tmp_path: Path) -> None:
    config = tmp_path / "chaos.yaml"
    config.write_text(CONFIG)
    runs = tmp_path / "runs"
    base = ["--root", str(USER_TASKS), "--runs-dir", str(runs), "--quiet"]
    rng = random.Random(int(os.environ.get("CHAOS_SEED", "7")))
    kills = 0
    proc = _start(["run", "--config", str(config), *base])
    for _ in range(10):
        time.sleep(rng.uniform(0.3, 3.0))
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            kills += 1
        proc.wait()
        time.sleep(0.3)
        run = runs / "chaos-run"
        if run.exists():
            _check_json(run)
            proc = _start(["run", "--resume", str(run), *base])
        else:
            proc = _start(["run", "--config", str(config), *base])
    proc.wait()
    final = subprocess.run([sys.executable, "-m", "trace_bench", "run", "--resume", str(runs / "chaos-run"), *base],
                           cwd=REPO, capture_output=True, text=True, timeout=600)
    assert final.returncode == 0, final.stderr
    run = runs / "chaos-run"
    with open(run / "results.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    ids = [r["job_id"] for r in rows]
    manifest = json.loads((run / "meta" / "manifest.json").read_text())
    expected = {j["job_id"] for j in manifest["jobs"]}
    duplicates = len(ids) - len(set(ids))
    lost = len(expected - set(ids))
    files = _check_json(run)
    retried = 0
    for job_id in expected:
        ledger = json.loads((run / "jobs" / job_id / "attempts.json").read_text())
        record = json.loads((run / "jobs" / job_id / "results.json").read_text())
        if ledger["attempts"] > 1:
            retried += 1
            assert record["budget_spent"]["llm_calls"] >= record["llm_calls"] + ledger["carried"].get("llm_calls", 0) - 1e-9
    print(f"\nCHAOS SUMMARY trials=1 kills={kills} jobs={len(expected)} rows={len(rows)} duplicates={duplicates} "
          f"lost={lost} retried_jobs={retried} json_files_checked={files}")
    assert len(expected) == 52 and duplicates == 0 and lost == 0
    assert all(r["status"] == "ok" for r in rows)


def _interrupt_run(tmp_path: Path, presses: int) -> tuple[int, Path]:
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG.replace("delay: 0.02", "delay: 0.2"))
    runs = tmp_path / "runs"
    proc = subprocess.Popen([sys.executable, "-m", "trace_bench", "run", "--config", str(config), "--root",
                             str(USER_TASKS), "--runs-dir", str(runs), "--quiet"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, start_new_session=True)
    started = runs / "chaos-run" / "events.jsonl"  # a job is running: there is something to let finish
    deadline = time.monotonic() + 300
    while '"job_started"' not in (started.read_text() if started.exists() else "") and time.monotonic() < deadline:
        assert proc.poll() is None, "the run ended before any job started"
        time.sleep(0.05)
    for _ in range(presses):
        os.kill(proc.pid, signal.SIGINT)
        time.sleep(0.2)
    code = proc.wait(timeout=120)
    return code, runs / "chaos-run"


def test_sigint_once_lets_running_jobs_finish(tmp_path: Path) -> None:
    code, run = _interrupt_run(tmp_path, presses=1)
    assert code == 1
    rows = list(csv.DictReader(open(run / "results.csv")))
    assert rows and all(r["status"] == "ok" for r in rows), "running jobs finish normally"
    assert len(rows) < 52
    resumed = subprocess.run([sys.executable, "-m", "trace_bench", "run", "--resume", str(run), "--root",
                              str(USER_TASKS), "--quiet"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0
    assert len(list(csv.DictReader(open(run / "results.csv")))) == 52


def test_sigint_twice_kills_running_jobs(tmp_path: Path) -> None:
    started = time.monotonic()
    code, run = _interrupt_run(tmp_path, presses=2)
    assert code == 1 and time.monotonic() - started < 60
    rows = list(csv.DictReader(open(run / "results.csv")))
    assert {r["status"] for r in rows} <= {"ok", "interrupted"}
    _check_json(run)

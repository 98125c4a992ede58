"""Chaos: SIGKILL the driver at random points of a 52-job run, resume after each kill; Ctrl-C.

Every job must end exactly once in results.csv, no JSON file may be corrupt, and a job that was
interrupted mid-way carries the LLM budget it already spent into its next attempt.  Kill points
are chosen by progress (a random number of run events after each start), never by sleeping, so
the test covers the same points of a run on an idle and on a loaded machine.
"""

from __future__ import annotations

import csv
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, USER_TASKS
from tests.waiting import (
    PATIENCE_S,
    LineReader,
    job_pids,
    read_events,
    wait_for_events,
    wait_gone,
    wait_until,
)

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


def _start(args: list[str], **popen: Any) -> subprocess.Popen[Any]:
    options = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL, **popen}
    return subprocess.Popen([sys.executable, "-m", "trace_bench", *args], cwd=REPO, start_new_session=True,
                            **options)


def _check_json(run: Path) -> int:
    count = 0
    for path in run.rglob("*.json"):
        json.loads(path.read_text())
        count += 1
    return count


def _rows(run: Path) -> list[dict[str, str]]:
    with open(run / "results.csv", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _kill_after_progress(proc: subprocess.Popen[Any], events: Path, steps: int) -> bool:
    """SIGKILL ``proc`` once the run log has ``steps`` more lines than now (0: at once); False when
    the run ended by itself first."""
    base = len(read_events(events))
    wait_until(lambda: proc.poll() is not None or len(read_events(events)) >= base + steps,
               what=f"{steps} more run events")
    if proc.poll() is not None:
        return False
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return True


def test_ten_random_kills_then_resume(tmp_path: Path, drivers: list[subprocess.Popen[Any]]) -> None:
    config = tmp_path / "chaos.yaml"
    config.write_text(CONFIG)
    runs = tmp_path / "runs"
    run = runs / "chaos-run"
    base = ["--root", str(USER_TASKS), "--runs-dir", str(runs), "--quiet"]
    rng = random.Random(int(os.environ.get("CHAOS_SEED", "7")))
    kills = 0
    proc = _start(["run", "--config", str(config), *base])
    drivers.append(proc)
    for _ in range(10):
        kills += _kill_after_progress(proc, run / "events.jsonl", rng.randint(0, 8))
        # the driver's job processes die with it; a resume must not race one of them
        wait_gone(job_pids(run, unfinished_only=True), what="job processes of the killed driver")
        if run.exists():
            _check_json(run)
        if (run / "meta" / "manifest.json").exists():
            proc = _start(["run", "--resume", str(run), *base])
        else:  # killed before the run had anything to resume
            proc = _start(["run", "--config", str(config), *base])
        drivers.append(proc)
    proc.wait(timeout=PATIENCE_S)
    final = subprocess.run([sys.executable, "-m", "trace_bench", "run", "--resume", str(run), *base],
                           cwd=REPO, capture_output=True, text=True, timeout=600)
    assert final.returncode == 0, final.stderr
    rows = _rows(run)
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
            # the cost columns include what the interrupted attempts spent
            assert record["carried_llm_calls"] == ledger["carried"].get("llm_calls", 0)
            assert record["budget_spent"]["llm_calls"] >= record["llm_calls"] - 1e-9
    print(f"\nCHAOS SUMMARY trials=1 kills={kills} jobs={len(expected)} rows={len(rows)} duplicates={duplicates} "
          f"lost={lost} retried_jobs={retried} json_files_checked={files}")
    assert kills >= 5, "most kills must land while the run is going on"
    assert len(expected) == 52 and duplicates == 0 and lost == 0
    assert all(r["status"] == "ok" for r in rows)


def _start_interruptible(tmp_path: Path, config_text: str,
                         drivers: list[subprocess.Popen[Any]]) -> tuple[subprocess.Popen[str], LineReader, Path]:
    """A run whose console lines (stderr, not --quiet) the test reads; its run dir."""
    config = tmp_path / "c.yaml"
    config.write_text(config_text)
    proc = _start(["run", "--config", str(config), "--root", str(USER_TASKS), "--runs-dir", str(tmp_path / "runs")],
                  stderr=subprocess.PIPE, text=True)
    drivers.append(proc)
    assert proc.stderr is not None
    return proc, LineReader(proc.stderr), tmp_path / "runs" / "chaos-run"


def _running_jobs(run: Path, count: int, proc: subprocess.Popen[Any]) -> list[str]:
    """Wait until ``count`` jobs have started and each has a live job process (its heartbeat):
    the driver's Ctrl-C handler is installed before the first job starts."""
    started = wait_for_events(run / "events.jsonl", "job_started", count, process=proc)
    ids = [event["job_id"] for event in started]
    wait_until(lambda: all((run / "jobs" / job_id / "heartbeat.json").exists() for job_id in ids),
               what="heartbeats of the started jobs", process=proc)
    return ids


def test_sigint_once_lets_running_jobs_finish(tmp_path: Path, drivers: list[subprocess.Popen[Any]]) -> None:
    # 24 jobs (6 seeds), the slow ones first: two run at Ctrl-C, the resume runs the rest
    config = CONFIG.replace("delay: 0.02", "delay: 0.2").replace(", 7, 8, 9, 10, 11, 12, 13]", "]")
    assert "seeds: [1, 2, 3, 4, 5, 6]\n" in config
    proc, console, run = _start_interruptible(tmp_path, config, drivers)
    running = _running_jobs(run, 1, proc)
    os.kill(proc.pid, signal.SIGINT)
    code = proc.wait(timeout=PATIENCE_S)
    output = console.close()
    assert code == 1, output
    assert "interrupt: no new jobs will start" in output
    rows = _rows(run)
    statuses = {r["job_id"]: r["status"] for r in rows}
    assert all(statuses.get(job_id) == "ok" for job_id in running), "the jobs running at Ctrl-C finish normally"
    assert rows and set(statuses.values()) == {"ok"}
    assert len(rows) < 24
    last = read_events(run / "events.jsonl")[-1]
    assert last["type"] == "run_finished" and last["interrupted"] is True
    resumed = subprocess.run([sys.executable, "-m", "trace_bench", "run", "--resume", str(run), "--root",
                              str(USER_TASKS), "--quiet"], cwd=REPO, capture_output=True, text=True, timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert len(_rows(run)) == 24


# Guides that sleep an hour: these jobs never end on their own within the test, so only a kill ends them.
ENDLESS = """
run_id: chaos-run
tasks:
  - id: slow_numeric
    eval_kwargs: {delay: 3600}
trainers: [NoOpTrainer]
seeds: [1, 2, 3]
max_workers: 2
"""


def test_sigint_twice_kills_running_jobs(tmp_path: Path, drivers: list[subprocess.Popen[Any]]) -> None:
    proc, console, run = _start_interruptible(tmp_path, ENDLESS, drivers)
    running = _running_jobs(run, 2, proc)
    pids = job_pids(run)
    assert len(pids) == 2
    os.kill(proc.pid, signal.SIGINT)
    console.wait_for("interrupt: no new jobs will start", process=proc)
    os.kill(proc.pid, signal.SIGINT)
    code = proc.wait(timeout=PATIENCE_S)  # a second Ctrl-C that killed nothing would wait an hour here
    output = console.close()
    assert code == 1, output
    assert "interrupt: killing running jobs" in output
    wait_gone(pids, what="job processes killed by the second Ctrl-C")
    rows = _rows(run)
    assert {r["job_id"]: r["status"] for r in rows} == {job_id: "interrupted" for job_id in running}
    _check_json(run)
    manifest = json.loads((run / "meta" / "manifest.json").read_text())
    assert sorted(j["status"] for j in manifest["jobs"]) == ["interrupted", "interrupted", "not_executed"]

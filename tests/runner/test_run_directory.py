"""The run directory under a running driver, and the commands a run prints.

A run directory deleted or replaced mid-run stops the run with an error (the driver used to
recreate part of it and print "Run complete"); a resume of a run without its config snapshot says
to pass the config; the resume command a run prints works when pasted, whatever --runs-dir was.
"""

from __future__ import annotations

import shlex
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, USER_TASKS, run_cli
from tests.waiting import PATIENCE_S, kill_group, wait_for_events

SLOW = """
run_id: doomed
tasks:
  - id: slow_numeric
    eval_kwargs: {delay: 0.2}
trainers:
  - id: PrioritySearch
    ps_steps: 3
seeds: [1, 2, 3, 4, 5, 6, 7, 8]
max_workers: 1
"""


def _start(tmp_path: Path) -> tuple[subprocess.Popen[str], Path]:
    config = tmp_path / "c.yaml"
    config.write_text(SLOW)
    proc = subprocess.Popen([sys.executable, "-m", "trace_bench", "run", "--config", str(config), "--root",
                             str(USER_TASKS), "--runs-dir", str(tmp_path / "runs"), "--quiet"], cwd=REPO,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    return proc, tmp_path / "runs" / "doomed"


@pytest.mark.parametrize("how", ["deleted", "replaced"])
def test_a_run_directory_deleted_or_replaced_mid_run_stops_the_run(tmp_path: Path, how: str) -> None:
    proc, run = _start(tmp_path)
    try:
        wait_for_events(run / "events.jsonl", "job_started", 1, process=proc)
        run.rename(tmp_path / "moved-away")  # atomic: the job process may be writing into it
        if how == "deleted":
            shutil.rmtree(tmp_path / "moved-away", ignore_errors=True)
        else:  # the job may have recreated it meanwhile (its writes make their folders): still not the run's
            run.mkdir(exist_ok=True)
        stdout, stderr = proc.communicate(timeout=PATIENCE_S)
    finally:
        kill_group(proc)
    assert proc.returncode == 1, stdout + stderr
    assert "Run complete" not in stdout
    assert f"the run directory {run} was deleted or replaced while the run was going" in stderr, stderr
    assert "start it again with trace-bench run --config" in stderr
    left: list[Any] = sorted(p.name for p in run.iterdir()) if run.exists() else []
    assert not {"meta", "results.csv", "summary.json", "leaderboard.csv", "events.jsonl"} & set(left), left


def test_resume_of_a_run_without_its_snapshot_says_to_pass_the_config(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("run_id: r\ntasks: [internal:numeric_param]\ntrainers: [NoOpTrainer]\n")
    run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet", check=True)
    (tmp_path / "runs" / "r" / "meta" / "config.snapshot.yaml").unlink()
    proc = run_cli("run", "--resume", "r", "--runs-dir", str(tmp_path / "runs"))
    assert proc.returncode == 2
    assert "has no config snapshot" in proc.stderr and "--resume r --config FILE" in proc.stderr
    resumed = run_cli("run", "--resume", "r", "--runs-dir", str(tmp_path / "runs"), "--config", str(config),
                      "--quiet")
    assert resumed.returncode == 0, resumed.stderr


def test_the_printed_resume_command_works_when_pasted(tmp_path: Path) -> None:
    """A run in a runs directory of its own, left with jobs not run (fail_fast): the command it
    prints, pasted as it is in the same directory, continues that run."""
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "broken.py").write_text("def build_trace_problem(**kwargs):\n    raise ValueError('no')\n")
    (tmp_path / "c.yaml").write_text("run_id: halted\ntasks: [broken]\ntrainers: [NoOpTrainer]\nseeds: [1, 2, 3]\n"
                                     "fail_fast: true\n")
    first = run_cli("run", "--config", "c.yaml", "--root", "tasks", "--runs-dir", "elsewhere/runs", cwd=tmp_path)
    assert first.returncode == 1, first.stderr
    (line,) = [line for line in first.stdout.splitlines() if "not run:" in line]
    command = line.split("resume with: ", 1)[1].rstrip(")")
    assert command == "trace-bench run --resume elsewhere/runs/halted"
    args = shlex.split(command)[1:]
    pasted = subprocess.run([sys.executable, "-m", "trace_bench", *args], cwd=tmp_path, capture_output=True,
                            text=True, timeout=PATIENCE_S)
    assert pasted.returncode == 1, pasted.stderr  # the task is still broken, but the run was found and went on
    assert "Run stopped early: halted" in pasted.stdout

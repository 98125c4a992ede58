"""Hard limits and isolation: timeout, memory, no cross-job contamination, secret masking."""

from __future__ import annotations

import csv
import json
import os
import re
from pathlib import Path

from tests.conftest import USER_TASKS, only_run_dir, run_cli
from tests.waiting import PATIENCE_S, count_events, job_pids, kill_group, wait_gone, wait_until


def _rows(run: Path) -> list[dict[str, str]]:
    with open(run / "results.csv", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_infinite_loop_is_killed_at_its_timeout(tmp_path: Path) -> None:
    """The loop never ends by itself: the run finishing at all shows that the job was killed."""
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [loop_forever, internal:numeric_param]\ntrainers: [NoOpTrainer]\nmax_workers: 2\n")
    proc = run_cli("run", "--config", str(config), "--root", str(USER_TASKS), "--runs-dir", str(tmp_path / "r"),
                   "--job-timeout", "3")
    assert proc.returncode == 1
    run = only_run_dir(tmp_path / "r")
    rows = {r["task"]: r for r in _rows(run)}
    looping = rows["llm4ad:loop_forever"]
    assert looping["status"] == "timeout"
    assert "exceeded 3s" in looping["error"]
    assert float(looping["time_seconds"]) >= 3, "not killed before its timeout"
    record = json.loads((run / "jobs" / looping["job_id"] / "results.json").read_text())
    assert record["traceback"].startswith("job_timeout: exceeded 3s"), "every failure fills its traceback"
    assert rows["internal:numeric_param"]["status"] == "ok", "the run goes on after a timeout"
    wait_gone(job_pids(run), what="the killed job's process")


def test_memory_bomb_is_contained(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [memory_bomb]\ntrainers: [NoOpTrainer]\njob_memory_mb: 1024\n")
    proc = run_cli("run", "--config", str(config), "--root", str(USER_TASKS), "--runs-dir", str(tmp_path / "r"))
    assert proc.returncode == 1
    row = _rows(only_run_dir(tmp_path / "r"))[0]
    assert row["status"] == "oom", row


def test_jobs_never_share_process_or_problem(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(
        "tasks: [shared_state]\nseeds: [1, 2]\nmax_workers: 2\n"
        "trainers:\n  - id: PrioritySearch\n    ps_steps: 2\n  - id: NoOpTrainer\n"
    )
    run_cli("run", "--config", str(config), "--root", str(USER_TASKS), "--runs-dir", str(tmp_path / "r"),
            "--quiet", check=True)
    run = only_run_dir(tmp_path / "r")
    rows = _rows(run)
    assert len(rows) == 4
    # a reused module or problem object would add a -100 penalty or start from an optimized value
    assert {r["score_initial"] for r in rows} == {"-5.0"}
    pids = []
    for row in rows:
        job = run / "jobs" / row["job_id"]
        built_in = [int(pid) for pid in re.findall(r"shared_state: problem built in pid (\d+)", (job / "stdout.log").read_text())]
        assert len(built_in) == 1, f"one problem per job: {built_in}"
        beat = json.loads((job / "heartbeat.json").read_text())
        assert beat["pid"] == built_in[0], "the job body ran in the process that built its problem"
        pids.append(built_in[0])
    assert len(set(pids)) == 4, f"every job in a process of its own: {pids}"
    assert os.getpid() not in pids


def test_planted_secret_never_reaches_the_run_dir(tmp_path: Path) -> None:
    secret = "sk-test" + "A1b2C3d4E5f6G7h8I9j0K1l2"
    config = tmp_path / "c.yaml"
    config.write_text(
        "tasks:\n  - id: prints_secret\n  - id: prints_secret\n    eval_kwargs: {explode: true}\n"
        "trainers: [NoOpTrainer]\nllm:\n  api_key_env: OPENAI_API_KEY\n"
    )
    run_cli("run", "--config", str(config), "--root", str(USER_TASKS), "--runs-dir", str(tmp_path / "r"),
            env={"OPENAI_API_KEY": secret, "MY_SERVICE_TOKEN": "tok-" + "z" * 20})
    run = only_run_dir(tmp_path / "r")
    rows = {r["error"][:15]: r for r in _rows(run)}
    assert any(r["status"] == "task_error" for r in rows.values())  # the task raised when built
    found = []
    for path in run.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            if secret.encode() in data or b"z" * 20 in data:
                found.append(str(path))
    assert not found, found
    summary = (run / "summary.json").read_text()
    assert '"token_totals"' in summary and "max_tokens" in (run / "meta" / "config.snapshot.yaml").read_text()
    assert os.environ.get("OPENAI_API_KEY") != secret


def test_killed_worker_is_lost_then_retried(tmp_path: Path) -> None:
    """SIGKILL of a job process (as the OOM killer would): recorded as worker lost, retried."""
    import signal
    import subprocess
    import sys

    from tests.conftest import REPO

    config = tmp_path / "c.yaml"
    config.write_text("run_id: lost\ntasks:\n  - id: slow_numeric\n    eval_kwargs: {delay: 0.3}\n"
                      "trainers:\n  - id: PrioritySearch\n    ps_steps: 3\nmax_retries: 1\n")
    proc = subprocess.Popen([sys.executable, "-m", "trace_bench", "run", "--config", str(config), "--root",
                             str(USER_TASKS), "--runs-dir", str(tmp_path / "r"), "--quiet"], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    run = tmp_path / "r" / "lost"
    try:
        # the job is under way: it has reported a step, so its process is the one doing the work
        wait_until(lambda: any(count_events(path, "step") for path in run.glob("jobs/*/events.jsonl")),
                   what="the job's first step", process=proc)
        [pid] = job_pids(run)
        os.kill(pid, signal.SIGKILL)
        assert proc.wait(timeout=PATIENCE_S) == 0, "the retry succeeds"
    finally:
        kill_group(proc)
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    retries = [e for e in events if e["type"] == "job_retry"]
    assert len(retries) == 1 and "exit code -9" in retries[0]["reason"]
    rows = _rows(run)
    assert len(rows) == 1 and rows[0]["status"] == "ok"

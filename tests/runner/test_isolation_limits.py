"""Hard limits and isolation: timeout, memory, no cross-job contamination, secret masking."""

from __future__ import annotations

import csv
import os
import time
from pathlib import Path

from tests.conftest import USER_TASKS, only_run_dir, run_cli


def _rows(run: Path) -> list[dict[str, str]]:
    with open(run / "results.csv", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_infinite_loop_is_killed_within_timeout(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [loop_forever, internal:numeric_param]\ntrainers: [NoOpTrainer]\nmax_workers: 2\n")
    started = time.monotonic()
    proc = run_cli("run", "--config", str(config), "--root", str(USER_TASKS), "--runs-dir", str(tmp_path / "r"),
                   "--job-timeout", "3")
    elapsed = time.monotonic() - started
    assert proc.returncode == 1
    rows = {r["task"]: r for r in _rows(only_run_dir(tmp_path / "r"))}
    assert rows["llm4ad:loop_forever"]["status"] == "timeout"
    assert "exceeded 3s" in rows["llm4ad:loop_forever"]["error"]
    assert float(rows["llm4ad:loop_forever"]["time_seconds"]) < 3 + 2
    assert rows["internal:numeric_param"]["status"] == "ok", "the run goes on after a timeout"
    assert elapsed < 60


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
    pids = set()
    for row in rows:
        log = (run / "jobs" / row["job_id"] / "stdout.log").read_text()
        del log
        events = (run / "jobs" / row["job_id"] / "events.jsonl").read_text()
        assert "job_started" in events
        pids.add(row["job_id"])
    assert len(pids) == 4


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
    assert any(r["status"] == "failed" for r in rows.values())
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
    import json
    import signal
    import subprocess
    import sys

    from tests.conftest import REPO

    config = tmp_path / "c.yaml"
    config.write_text("run_id: lost\ntasks:\n  - id: slow_numeric\n    eval_kwargs: {delay: 0.5}\n"
                      "trainers:\n  - id: PrioritySearch\n    ps_steps: 6\nmax_retries: 1\n")
    proc = subprocess.Popen([sys.executable, "-m", "trace_bench", "run", "--config", str(config), "--root",
                             str(USER_TASKS), "--runs-dir", str(tmp_path / "r"), "--quiet"], cwd=REPO,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    run = tmp_path / "r" / "lost"
    deadline = time.monotonic() + 60
    beat = None
    while time.monotonic() < deadline:
        beats = list((run / "jobs").glob("*/heartbeat.json")) if (run / "jobs").exists() else []
        if beats:
            try:
                beat = json.loads(beats[0].read_text())
                break
            except ValueError:
                pass
        time.sleep(0.1)
    assert beat is not None
    time.sleep(0.5)
    os.kill(beat["pid"], signal.SIGKILL)
    assert proc.wait(timeout=120) == 0, "the retry succeeds"
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    retries = [e for e in events if e["type"] == "job_retry"]
    assert len(retries) == 1 and "exit code -9" in retries[0]["reason"]
    rows = _rows(run)
    assert len(rows) == 1 and rows[0]["status"] == "ok"

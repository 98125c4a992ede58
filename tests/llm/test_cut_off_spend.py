"""Spend in flight is spend: a call cut off by a kill, or left running when its job ends, is
charged (its prompt, a completion up to the ``max_tokens`` cap, flagged estimated) in the job's
record, its curve and its budget, since the provider received it and bills it."""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from tests.conftest import REPO
from tests.llm.servers import StallingServer
from tests.waiting import PATIENCE_S, job_pids, kill_group, wait_until
from trace_bench.llm.backend import StubBackend
from trace_bench.llm.budget import Budget
from trace_bench.llm.session import LLMSession
from trace_bench.llm.stub import StubPolicy
from trace_bench.store.job_store import JobStore

CAP = 77


def test_a_job_killed_mid_call_is_charged_for_the_call(tmp_path: Path) -> None:
    """Two calls come back, the third is in flight when the job process is killed: the record,
    the curve's last row and the budget's count hold three calls, the third with the cap."""
    with StallingServer(answered=2) as server:
        config = tmp_path / "c.yaml"
        config.write_text(f"""
mode: real
run_id: cut
tasks: [internal:numeric_param]
trainers: [{{id: MinibatchAlgorithm, num_steps: 5}}]
seeds: [1]
max_retries: 0
llm: {{base_url: "{server.url}", model: fake-model, max_tokens: {CAP}, max_retries: 0}}
""")
        proc = subprocess.Popen([sys.executable, "-m", "trace_bench", "run", "--config", str(config), "--runs-dir",
                                 str(tmp_path / "runs"), "--quiet"], cwd=REPO, start_new_session=True,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            run = tmp_path / "runs" / "cut"
            wait_until(lambda: server.holding() == 1 and server.stats()["ok"] >= 2,
                       what="the third call in flight", process=proc)
            (pid,) = wait_until(lambda: job_pids(run), what="the job's pid", process=proc)
            os.kill(pid, signal.SIGKILL)
            assert proc.wait(timeout=PATIENCE_S) == 1
        finally:
            kill_group(proc)
        stats = server.stats()
    (job,) = (run / "jobs").iterdir()
    record = json.loads((job / "results.json").read_text())
    assert record["status"] == "failed"
    checks = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines() if '"preflight"' in line]
    answered = stats["completion_tokens"] - sum(check["completion_tokens"] for check in checks)
    assert record["llm_calls"] == 3
    assert record["completion_tokens"] == answered + CAP
    assert record["tokens_estimated"] is True
    assert record["budget_spent"]["llm_calls"] == 3
    assert record["budget_spent"]["tokens"] == record["total_tokens"]
    with open(job / "artifacts" / "curve.csv", encoding="utf-8") as handle:
        last = list(csv.DictReader(handle))[-1]
    assert int(last["llm_calls"]) == 3 and int(last["tokens"]) == record["total_tokens"]
    # the kill left parameters nobody measured: the closing row has no score of its own
    assert last["kind"] == "stop" and last["score"] == "" and float(last["best_score"]) == record["score_best"]
    with open(run / "results.csv", encoding="utf-8") as handle:
        (row,) = list(csv.DictReader(handle))
    assert int(row["llm_calls"]) == 3 and int(row["completion_tokens"]) == answered + CAP


class _Blocking(StubBackend):
    """Holds every call until released, as a provider that is slow to answer."""

    def __init__(self) -> None:
        super().__init__(StubPolicy(seed=1), model="m")
        self.max_tokens = CAP
        self.entered, self.release = threading.Event(), threading.Event()

    def estimate_cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens + 2 * completion_tokens) / 1e6

    def complete(self, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        self.entered.set()
        self.release.wait(timeout=PATIENCE_S)
        return super().complete(messages, **kwargs)


def test_a_call_left_in_flight_when_the_job_ends_is_charged_once(tmp_path: Path) -> None:
    backend = _Blocking()
    events: list[dict[str, Any]] = []
    session = LLMSession({"optimizer": backend}, budget=Budget(), events=events.append)
    job = JobStore(tmp_path / "job")
    session.journal = job.open_spend_journal(durable=True)
    thread = threading.Thread(target=session.chat, args=("optimizer", [{"role": "user", "content": "x" * 40}]),
                              kwargs={"max_tokens": 4096})
    thread.start()
    assert backend.entered.wait(PATIENCE_S)
    assert session.charge_cut_off() == 1
    train = session.totals.by_phase["train"]
    assert (train.llm_calls, train.completion_tokens, train.estimated) == (1, CAP, True)
    assert train.cost_usd == (train.prompt_tokens + 2 * CAP) / 1e6
    (event,) = events
    assert event["cut_off"] is True and event["estimated"] is True
    backend.release.set()
    thread.join(PATIENCE_S)
    assert session.totals.by_phase["train"].llm_calls == 1, "the late answer is not counted again"
    session.journal.close()
    assert job.read_spend() == {"llm_calls": 1, "tokens": train.total_tokens, "usd": train.cost_usd}


def test_the_budget_carries_a_cut_off_call_with_its_cap(tmp_path: Path) -> None:
    job = JobStore(tmp_path / "job")
    journal = job.open_spend_journal(durable=False)
    journal.sent(10, completion_cap=CAP, usd_if_cut=0.25)
    journal.sent(5, phase="measure", completion_cap=CAP, usd_if_cut=0.5)  # measurement: never the budget's
    journal.close()
    assert job.read_spend() == {"llm_calls": 1, "tokens": 10 + CAP, "usd": 0.25}

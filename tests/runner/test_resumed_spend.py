"""A job interrupted and resumed shows what all its attempts spent, so it never looks cheaper.

Real mode against the fake provider: the provider answers three calls and holds the fourth; two
Ctrl-C kill the job with that call in flight; the resume finishes the job's budget.  The provider
received eight calls, and the job's cost columns, its curve and the arm's leaderboard means say so.
"""

from __future__ import annotations

import csv
import json
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

from tests.conftest import REPO, run_cli
from tests.llm.servers import StallingServer, preflight_requests
from tests.waiting import PATIENCE_S, LineReader, job_pids, wait_gone, wait_until


def _rows(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_a_resumed_jobs_cost_and_curve_include_its_interrupted_attempt(
        tmp_path: Path, drivers: list[subprocess.Popen[Any]]) -> None:
    with StallingServer(answered=3) as server:
        config = tmp_path / "c.yaml"
        config.write_text(f"""
run_id: resumed
mode: real
tasks: [internal:numeric_param]
trainers: [{{id: PrioritySearch, ps_steps: 20, ps_batches: 1}}]
seeds: [1]
max_workers: 1
budget: {{llm_calls: 8}}
llm: {{base_url: "{server.url}", model: fake-model, max_retries: 0, max_tokens: 50,
      prices: {{fake-model: {{input_per_mtok: 0.5, output_per_mtok: 1.5}}}}}}
""", encoding="utf-8")
        runs = tmp_path / "runs"
        run = runs / "resumed"
        proc = subprocess.Popen([sys.executable, "-m", "trace_bench", "run", "--config", str(config), "--runs-dir",
                                 str(runs)], cwd=REPO, start_new_session=True, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE, text=True)
        drivers.append(proc)
        assert proc.stderr is not None
        console = LineReader(proc.stderr)
        # the preflight's one-token check (the fake server lists its models to anyone) is answered too
        wait_until(lambda: server.holding() == 1 and server.stats()["ok"] == 3 + preflight_requests(run)[1],
                   process=proc, what="three answered calls and a fourth held in flight")
        pids = job_pids(run)
        os.kill(proc.pid, signal.SIGINT)
        console.wait_for("interrupt: no new jobs will start", process=proc)
        os.kill(proc.pid, signal.SIGINT)
        assert proc.wait(timeout=PATIENCE_S) == 1, console.close()
        console.close()
        wait_gone(pids, what="the killed job process")
        [interrupted] = _rows(run / "results.csv")
        assert interrupted["status"] == "interrupted"
        server.release()
        resumed = run_cli("run", "--resume", str(run), "--quiet")
        assert resumed.returncode == 0, resumed.stderr
        # chat completions the provider received from the jobs (the run's preflight checks aside)
        received = sum(server.stats()["max_tokens"].values()) - preflight_requests(run)[1]
    [row] = _rows(run / "results.csv")
    job = run / "jobs" / row["job_id"]
    ledger = json.loads((job / "attempts.json").read_text(encoding="utf-8"))
    record = json.loads((job / "results.json").read_text(encoding="utf-8"))
    carried = ledger["carried"]
    assert ledger["attempts"] == 2 and carried["llm_calls"] == 4  # three answered, one cut off in flight
    assert row["status"] == "budget_exhausted"
    # the cost columns are the job's whole spend: what the provider received, what the budget counted
    assert int(row["llm_calls"]) == received == record["budget_spent"]["llm_calls"] == 8
    assert int(row["total_tokens"]) == record["budget_spent"]["tokens"]
    assert int(row["carried_llm_calls"]) == 4 and int(row["carried_tokens"]) == carried["tokens"]
    assert int(row["prompt_tokens"]) + int(row["completion_tokens"]) == int(row["total_tokens"]) - carried["tokens"]
    # the final attempt's curve starts at the carried spend and ends at the job's whole spend
    curve = _rows(job / "artifacts" / "curve.csv")
    assert (int(curve[0]["llm_calls"]), int(curve[0]["tokens"])) == (4, carried["tokens"])
    assert int(curve[-1]["llm_calls"]) == 8 and int(curve[-1]["tokens"]) == int(row["total_tokens"])
    [arm] = _rows(run / "leaderboard.csv")
    assert float(arm["mean_llm_calls"]) == 8 and float(arm["mean_tokens"]) == int(row["total_tokens"])

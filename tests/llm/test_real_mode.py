"""Real mode against the fake OpenAI-compatible server: exact accounting, faults, cache/replay, secrets."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from tests.conftest import only_run_dir, run_cli
from tests.llm.servers import HoldingServer, preflight_requests
from trace_bench.llm.fake_server import FakeLLMServer

KEY = "sk-planted" + "Q9w8E7r6T5y4U3i2O1p0"


def _config(path: Path, url: str, extra: str = "", seeds: str = "[1, 2]", timeout_s: float = 120,
            max_retries: int = 6) -> Path:
    """``timeout_s``: per request; a short one on a loaded machine would cut off answers the server
    has already counted, and the exact-accounting checks would compare different things."""
    path.write_text(f"""
mode: real
tasks: [internal:numeric_param, internal:multi_param]
trainers:
  - id: PrioritySearch
    ps_steps: 2
  - NoOpTrainer
seeds: {seeds}
max_workers: 2
llm:
  base_url: {url}
  model: fake-model
  api_key_env: FAKE_LLM_KEY
  max_retries: {max_retries}
  prices: {{fake-model: {{input_per_mtok: 0.5, output_per_mtok: 1.5}}}}
  timeout_s: {timeout_s}
{extra}
""")
    return path


def _rows(run: Path) -> list[dict[str, str]]:
    with open(run / "results.csv", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _transcript(job: Path) -> list[dict[str, object]]:
    """A job's transcript lines without what differs between a call and its replay (when, how long, cached)."""
    path = job / "artifacts" / "transcript.jsonl"
    lines = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()] if path.exists() else []
    return [{k: v for k, v in line.items() if k not in ("ts", "latency_s", "cached")} for line in lines]


def test_tokens_and_calls_equal_what_the_server_returned(tmp_path: Path) -> None:
    with FakeLLMServer(api_key=KEY) as server:
        config = _config(tmp_path / "c.yaml", server.url)
        proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "r"), "--quiet",
                       env={"FAKE_LLM_KEY": KEY, "OPENAI_API_KEY": KEY})
        stats = server.stats()
    assert proc.returncode == 0, proc.stderr
    run = only_run_dir(tmp_path / "r")
    summary = json.loads((run / "summary.json").read_text())
    assert summary["token_totals"]["prompt"] == stats["prompt_tokens"]
    assert summary["token_totals"]["completion"] == stats["completion_tokens"]
    checks, completions = preflight_requests(run)  # the preflight's requests are the run's, apart from the jobs'
    assert checks >= 1
    assert summary["llm_calls"] == stats["requests"] - checks == stats["ok"] - completions > 0
    assert summary["tokens_estimated"] is False
    for path in run.rglob("*"):
        if path.is_file():
            assert KEY not in path.read_text(errors="replace"), path


def test_faults_are_retried_or_fail_cleanly(tmp_path: Path) -> None:
    with FakeLLMServer(error_rate=0.15, malformed_rate=0.1, rate_limit_every=4, timeout_rate=0.05, hang_s=60,
                       seed=3) as server:
        # hung requests end by the client's timeout; 3 retries (backoff up to 0.5 + 1 + 2 s) still show
        # retries and clean failures, where 6 spent up to 16 s more per request waiting
        config = _config(tmp_path / "c.yaml", server.url, timeout_s=2, max_retries=3, seeds="[1]")
        proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "r"), "--quiet",
                       env={"FAKE_LLM_KEY": KEY})
        stats = server.stats()
    assert "Traceback" not in proc.stderr
    run = only_run_dir(tmp_path / "r")
    rows = _rows(run)
    assert len(rows) == 4
    for row in rows:
        assert row["status"] == "ok" or "LLM" in row["error"] or "Error" in row["error"], row
    assert set(stats["by_status"]) >= {"200", "429", "500"}
    retried = 0
    for row in rows:
        events = [json.loads(line) for line in (run / "jobs" / row["job_id"] / "events.jsonl").read_text().splitlines()]
        retried += sum(e.get("retries", 0) for e in events if e["type"] == "llm_call")
    assert retried > 0, "retries are visible in the events"


def test_record_then_replay_offline(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    with FakeLLMServer() as server:
        url = server.url
        recorded = _config(tmp_path / "rec.yaml", url, f"  cache: read_write\n  cache_path: {cache}")
        run_cli("run", "--config", str(recorded), "--runs-dir", str(tmp_path / "a"), "--quiet",
                env={"FAKE_LLM_KEY": KEY}, check=True)
    replay = _config(tmp_path / "rep.yaml", url, f"  cache: replay\n  cache_path: {cache}")
    run_cli("run", "--config", str(replay), "--runs-dir", str(tmp_path / "b"), "--quiet",
            env={"FAKE_LLM_KEY": KEY}, check=True)
    a, b = _rows(only_run_dir(tmp_path / "a")), _rows(only_run_dir(tmp_path / "b"))
    keys = ("job_id", "status", "score_initial", "score_best", "score_final")
    assert [{k: r[k] for k in keys} for r in a] == [{k: r[k] for k in keys} for r in b]
    # every replayed answer is charged like the call it replays; cache_hits says they all came from the cache
    calls = {r["job_id"]: (r["llm_calls"], r["total_tokens"], r["cost_usd"]) for r in a}
    for row in b:
        if row["trainer"] == "PrioritySearch":
            assert (row["llm_calls"], row["total_tokens"], row["cost_usd"]) == calls[row["job_id"]]
            assert int(row["cache_hits"]) == int(row["llm_calls"]) > 0
    # the replay's transcripts are the recording's: the same calls, messages and answers, in order
    for row in a:
        recorded, replayed = (_transcript(only_run_dir(tmp_path / side) / "jobs" / row["job_id"]) for side in "ab")
        assert recorded == replayed and (row["trainer"] == "NoOpTrainer" or recorded)
    # a replay that needs an answer nobody recorded fails loudly
    other = _config(tmp_path / "miss.yaml", url, f"  cache: replay\n  cache_path: {cache}", seeds="[99]")
    run_cli("run", "--config", str(other), "--runs-dir", str(tmp_path / "c"), "--quiet", env={"FAKE_LLM_KEY": KEY})
    missed = [r for r in _rows(only_run_dir(tmp_path / "c")) if r["trainer"] == "PrioritySearch"]
    assert missed and all(r["status"] == "failed" and "replay cache miss" in r["error"] for r in missed)


@pytest.mark.parametrize("optimizer", ["OptoPrime", "OptoPrimeMulti", "OPRO", "TextGrad"])
def test_each_optimizer_steps_through_the_metered_client(optimizer: str) -> None:
    from opto import trace

    from trace_bench.llm.factory import build_session
    from trace_bench.trainers.optimizers import build_optimizer

    with FakeLLMServer() as server:
        session = build_session(mode="real", llm={"base_url": server.url, "model": "fake-model", "max_retries": 0},
                                budget={}, seed=0)
        x = trace.node(1.0, name="x", trainable=True)
        opt = build_optimizer(optimizer, [x], session.client("optimizer"),
                              {"num_responses": 2} if optimizer == "OptoPrimeMulti" else {})
        opt.zero_feedback()
        opt.backward(x, "The value should be 3.")
        opt.propose()
        assert session.totals.llm_calls == server.stats()["requests"] > 0
        assert session.totals.prompt_tokens == server.stats()["prompt_tokens"]


def test_max_concurrency_is_reached_and_respected_across_job_processes(tmp_path: Path) -> None:
    """Four job processes share a bound of two requests in flight: the server holds its first two
    requests until both are in (the bound is reached); the latency of every request keeps the
    four jobs pressing on the limiter, so a bound that did not hold would show more than two."""
    with HoldingServer(bound=2, latency=0.2) as server:
        config = tmp_path / "c.yaml"
        config.write_text(f"""
mode: real
tasks: [internal:numeric_param]
trainers:
  - id: PrioritySearch
    ps_steps: 2
    ps_candidates: 3
    ps_proposals: 2
seeds: [1, 2, 3, 4]
max_workers: 4
llm:
  base_url: {server.url}
  model: fake-model
  max_concurrency: 2
  prices: {{fake-model: {{input_per_mtok: 0.5, output_per_mtok: 1.5}}}}
""")
        run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "r"), "--quiet", check=True)
        stats = server.stats()
    assert stats["requests"] > 8
    assert not server.barrier_broken, "two requests were never in flight together"
    assert stats["max_in_flight"] == 2

"""A key the provider stops accepting in the middle of a run stops the run: after the first job that
met the 401 (or a quota the provider says is spent for good), no new job starts, the run exits 2
with one line naming the key variable, and ``--resume`` finishes it once the key works again."""

from __future__ import annotations

import json
from pathlib import Path

from tests.conftest import only_run_dir, run_cli
from trace_bench.llm import retry
from trace_bench.llm.errors import QuotaExhaustedError, RateLimitError
from trace_bench.llm.fake_server import FakeLLMServer

KEY = "sk-mid" + "Q1w2E3r4T5y6U7i8O9p0"


def _errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("trace-bench: error:")]


def test_a_key_revoked_mid_run_stops_the_matrix_and_resume_finishes_it(tmp_path: Path) -> None:
    # the preflight's completion and the first job's calls pass; the key dies in the first job
    with FakeLLMServer(api_key=KEY, public_models=True, refuse_after=3) as server:
        config = tmp_path / "c.yaml"
        config.write_text(f"""
mode: real
run_id: revoked
tasks: [internal:multi_param]
trainers: [{{id: MinibatchAlgorithm, num_steps: 4}}]
seeds: [1, 2, 3]
max_workers: 1
llm: {{base_url: "{server.url}", model: fake-model, api_key_env: MID_KEY, max_retries: 0, max_tokens: 200,
      prices: {{fake-model: {{input_per_mtok: 1, output_per_mtok: 2}}}}}}
""")
        proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet",
                       env={"MID_KEY": KEY})
        refused = server.stats()["by_status"].get("401", 0)
        run = only_run_dir(tmp_path / "runs")
        records = [json.loads(p.read_text()) for p in run.glob("jobs/*/results.json")]
        assert proc.returncode == 2, proc.stdout + proc.stderr
        (error,) = _errors(proc.stderr)
        assert "the provider refused the key in MID_KEY (HTTP 401: the key was revoked)" in error
        assert f"trace-bench run --resume {run}" in error or "trace-bench run --resume" in error
        assert KEY not in proc.stdout + proc.stderr
        assert len(records) == 1 and records[0]["status"] == "failed", "no job started after the refusal"
        assert records[0]["key_refused"]["key_variable"] == "MID_KEY" and refused == 1, "the dead key is not sent again"
        finished = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()
                    if '"run_finished"' in line]
        assert finished[-1]["key_refused"] == "MID_KEY" and finished[-1]["not_run"] == 2

        server.reinstate()  # the user fixed the key
        again = run_cli("run", "--resume", str(run), "--quiet", env={"MID_KEY": KEY})
    assert again.returncode == 0, again.stdout + again.stderr
    records = [json.loads(p.read_text()) for p in run.glob("jobs/*/results.json")]
    assert len(records) == 3 and {r["status"] for r in records} == {"ok"}
    assert all(r["key_refused"] is None for r in records)


def test_a_quota_the_provider_marks_spent_for_good_is_not_retried_and_stops_the_run() -> None:
    class QuotaError(Exception):
        status_code = 429
        body = {"error": {"message": "You exceeded your current quota, please check your plan and billing details.",
                          "type": "insufficient_quota", "code": "insufficient_quota"}}

    class RateError(Exception):
        status_code = 429
        body = {"error": {"message": "Rate limit reached for gpt-4o-mini on tokens per min.", "code": "rate_limit"}}

    quota, rate = retry.classify(QuotaError("429")), retry.classify(RateError("429"))
    assert isinstance(quota, QuotaExhaustedError) and not quota.retryable and quota.key_refused
    assert isinstance(rate, RateLimitError) and rate.retryable and not rate.key_refused


def test_a_quota_spent_mid_job_is_recorded_as_such(tmp_path: Path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from tests.trainers.external_jobs import run_jobs

    with FakeLLMServer(refuse_after=1, refusal="quota") as server:
        config = {"mode": "real", "tasks": ["internal:multi_param"], "seeds": [1],
                  "trainers": [{"id": "MinibatchAlgorithm", "num_steps": 3}],
                  "llm": {"base_url": server.url, "model": "fake-model", "max_retries": 2,
                          "prices": {"fake-model": {"input_per_mtok": 1, "output_per_mtok": 2}}}}
        [(result, _)] = run_jobs(config, tmp_path, monkeypatch)
        stats = server.stats()
    assert result.status == "failed" and result.key_refused is not None
    assert (result.key_refused.kind, result.key_refused.status, result.key_refused.key_variable) == \
        ("quota", 429, "OPENAI_API_KEY")
    assert stats["by_status"].get("429") == 1, "not retried"

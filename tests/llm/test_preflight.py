"""Preflight: a real run checks each (endpoint, model, key variable) with one cheap request before
its first job; a refused key, an unknown model or a server that is down is exit 2 with one line
naming the variable or the endpoint, no job runs and no key is printed."""

from __future__ import annotations

import json
import socket
from pathlib import Path

from tests.conftest import only_run_dir, run_cli
from trace_bench.llm.fake_server import FakeLLMServer
from trace_bench.llm.preflight import targets

KEY = "sk-right" + "A1b2C3d4E5f6G7h8I9j0"
WRONG = "sk-wrong" + "Z9y8X7w6V5u4T3s2R1q0"


def _config(tmp_path: Path, url: str, model: str = "fake-model", extra: str = "") -> Path:
    config = tmp_path / "c.yaml"
    config.write_text(f"""
mode: real
tasks: [internal:numeric_param]
trainers: [{{id: MinibatchAlgorithm, num_steps: 1}}]
seeds: [1, 2]
llm: {{base_url: "{url}", model: {model}, api_key_env: PREFLIGHT_KEY{extra}}}
""")
    return config


def _run(tmp_path: Path, config: Path, key: str | None, *flags: str) -> tuple[int, str, str]:
    proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), *flags,
                   env={"PREFLIGHT_KEY": key})
    return proc.returncode, proc.stdout, proc.stderr


def _errors(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if line.startswith("trace-bench: error:")]


def _no_run(tmp_path: Path) -> bool:
    return not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_a_wrong_key_stops_the_run_before_any_job(tmp_path: Path) -> None:
    with FakeLLMServer(api_key=KEY) as server:
        code, stdout, stderr = _run(tmp_path, _config(tmp_path, server.url), WRONG)
        stats = server.stats()
    assert code == 2, stdout + stderr
    (error,) = _errors(stderr)
    assert "PREFLIGHT_KEY" in error and "401" in error and server.url in error
    assert WRONG not in stdout + stderr and KEY not in stdout + stderr
    assert stats["requests"] == 1 and stats["ok"] == 0, "one request, no chat completion"
    assert _no_run(tmp_path), "no run directory, no job"


def test_an_unset_key_variable_is_named_with_what_to_do(tmp_path: Path) -> None:
    with FakeLLMServer(api_key=KEY) as server:
        code, _, stderr = _run(tmp_path, _config(tmp_path, server.url), None)
    assert code == 2
    (error,) = _errors(stderr)
    assert "PREFLIGHT_KEY is not set" in error and "export PREFLIGHT_KEY" in error
    assert "trace-bench: warning: llm.api_key_env names PREFLIGHT_KEY, which is not set" in stderr
    assert _no_run(tmp_path)


def test_an_unreachable_endpoint_is_named(tmp_path: Path) -> None:
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        url = f"http://127.0.0.1:{probe.getsockname()[1]}/v1"
    code, _, stderr = _run(tmp_path, _config(tmp_path, url), KEY)
    assert code == 2
    (error,) = _errors(stderr)
    assert f"cannot reach {url}" in error and "llm.base_url" in error
    assert _no_run(tmp_path)


def test_a_model_the_endpoint_does_not_know_is_named(tmp_path: Path) -> None:
    with FakeLLMServer(models=["served-model"]) as server:
        code, _, stderr = _run(tmp_path, _config(tmp_path, server.url, model="missing-model"), KEY)
        stats = server.stats()
    assert code == 2
    (error,) = _errors(stderr)
    assert "missing-model" in error and "404" in error and "llm.model" in error
    assert stats["by_status"] == {"200": 1, "404": 1}, "the model list, then one one-token completion"
    assert _no_run(tmp_path)


def test_a_passing_preflight_is_recorded_apart_from_the_jobs_spend(tmp_path: Path) -> None:
    with FakeLLMServer(api_key=KEY, models=["fake-model"]) as server:
        code, stdout, stderr = _run(tmp_path, _config(tmp_path, server.url), KEY)
        stats = server.stats()
    assert code == 0, stdout + stderr
    assert f"preflight: {server.url} model fake-model (PREFLIGHT_KEY): ok" in stderr
    run = only_run_dir(tmp_path / "runs")
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    (check,) = [e for e in events if e["type"] == "preflight"]
    assert check["ok"] and check["method"] == "models" and check["requests"] == 1
    assert KEY not in (run / "events.jsonl").read_text()
    summary = json.loads((run / "summary.json").read_text())
    assert summary["llm_calls"] == stats["ok"] == stats["requests"] - check["requests"]


def test_no_preflight_runs_the_jobs_which_report_the_provider_error_once_and_whole(tmp_path: Path) -> None:
    with FakeLLMServer(api_key=KEY) as server:
        code, _, stderr = _run(tmp_path, _config(tmp_path, server.url, extra=", max_retries: 0"), WRONG,
                               "--no-preflight", "--quiet")
    assert code == 1, stderr
    run = only_run_dir(tmp_path / "runs")
    errors = {json.loads(p.read_text())["error"] for p in run.glob("jobs/*/results.json")}
    assert errors and all(e.endswith("AuthenticationError: HTTP 401: invalid api key") for e in errors), errors
    assert all(e.count("AuthenticationError") == 1 for e in errors), errors


def test_one_check_per_distinct_endpoint_model_and_key_variable() -> None:
    llm = {"base_url": "http://127.0.0.1:1/v1", "model": "a", "api_key_env": "K1",
           "roles": {"agent": {"model": "b"}, "judge": {"model": "a", "api_key_env": "K2"}}}
    found = [(t.endpoint, t.model, t.key_variable) for t in targets(llm)]
    assert found == [("http://127.0.0.1:1/v1", "a", "K1"), ("http://127.0.0.1:1/v1", "b", "K1"),
                     ("http://127.0.0.1:1/v1", "a", "K2")]

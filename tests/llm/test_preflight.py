"""Preflight: a real run checks each (endpoint, model, key variable) with one cheap request before
its first job; a refused key, an unknown model or a server that is down is exit 2 with one line
naming the variable or the endpoint, no job runs and no key is printed."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO, only_run_dir, run_cli
from trace_bench.llm.fake_server import FakeLLMServer
from trace_bench.llm.preflight import PreflightError, Target, check_target, run_preflight, targets

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
    assert stats["requests"] == 2 and stats["ok"] == 0, "the model list asked without and with the key"
    assert _no_run(tmp_path), "no run directory, no job"


def test_a_model_list_anyone_can_read_does_not_pass_a_wrong_key(tmp_path: Path) -> None:
    """llama.cpp with ``--api-key`` lists its models to anyone: the check then proves the key with a
    one-token completion, which the server refuses."""
    with FakeLLMServer(api_key=KEY, public_models=True, models=["fake-model"]) as server:
        code, stdout, stderr = _run(tmp_path, _config(tmp_path, server.url), WRONG)
        stats = server.stats()
    assert code == 2, stdout + stderr
    (error,) = _errors(stderr)
    assert "refused the key in PREFLIGHT_KEY: 401" in error and WRONG not in stdout + stderr
    assert stats["by_status"] == {"200": 1, "401": 1} and stats["ok"] == 0, "the public list, then the completion"
    assert _no_run(tmp_path)


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


def test_a_model_the_endpoint_does_not_list_is_named_with_the_models_it_lists(tmp_path: Path) -> None:
    """A server that answers any model name (llama.cpp) lists the one it serves: a model it does not
    list is refused before any job, with the names it lists, and no completion is sent."""
    with FakeLLMServer(models=["served-model", "other-model"]) as server:
        code, _, stderr = _run(tmp_path, _config(tmp_path, server.url, model="missing-model"), KEY)
        stats = server.stats()
    assert code == 2
    (error,) = _errors(stderr)
    assert "does not list model 'missing-model' (it lists: other-model, served-model)" in error
    assert "llm.model" in error and "llm.any_model" in error
    assert stats["by_status"] == {"200": 1} and stats["ok"] == 0, "the model list only"
    assert _no_run(tmp_path)


def test_any_model_accepts_an_unlisted_model_with_a_warning_and_a_completion() -> None:
    with FakeLLMServer() as server:  # answers any name, lists fake-model
        llm = {"base_url": server.url, "model": "my-gguf", "any_model": True}
        (check,) = run_preflight(llm)
        stats = server.stats()
    assert check.method == "completion" and check.status == 200 and stats["ok"] == 1
    assert "does not list model 'my-gguf' (it lists: fake-model)" in check.warning and "llm.any_model" in check.warning
    with FakeLLMServer() as server, pytest.raises(PreflightError, match="does not list model 'my-gguf'"):
        run_preflight({"base_url": server.url, "model": "my-gguf"})


def test_the_check_never_loads_litellm_and_prices_only_from_the_config() -> None:
    """The driver runs the check: its one-token completion is priced with ``llm.prices`` or not at
    all (``cost_known`` false), never with LiteLLM's price map."""
    with FakeLLMServer() as server:
        script = ("import json, sys\n"
                  "from trace_bench.llm.preflight import run_preflight\n"
                  f"free = run_preflight({{'base_url': '{server.url}', 'model': 'fake-model'}})[0]\n"
                  f"priced = run_preflight({{'base_url': '{server.url}', 'model': 'fake-model', 'prices': "
                  "{'fake-model': {'input_per_mtok': 1e6, 'output_per_mtok': 1e6}}})[0]\n"
                  "print(json.dumps([free.cost_known, free.cost_usd, priced.cost_known, priced.cost_usd,\n"
                  "                  priced.prompt_tokens + priced.completion_tokens, 'litellm' in sys.modules]))\n")
        proc = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True)
    free_known, free_usd, priced_known, priced_usd, tokens, litellm_loaded = json.loads(proc.stdout)
    assert (free_known, free_usd, priced_known) == (False, 0.0, True)
    assert priced_usd == tokens > 0 and not litellm_loaded


def test_a_provider_litellm_routes_is_checked_in_a_child_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """A provider only LiteLLM knows how to call gets its one-token completion from a child process,
    which hands back the refusal; the key reaches the child in its environment only."""
    with FakeLLMServer(api_key=KEY) as server:
        monkeypatch.setenv("OPENAI_API_BASE", server.url)  # LiteLLM's own fallback for openai/ models
        target = Target(endpoint="openai (LiteLLM)", model="openai/fake-model", litellm_model="openai/fake-model",
                        key_variable="PREFLIGHT_KEY", key=WRONG, openai_compatible=False)
        with pytest.raises(PreflightError, match="refused the key in PREFLIGHT_KEY") as caught:
            check_target(target, 10.0)
        stats = server.stats()
    assert stats["by_status"] == {"401": 1} and WRONG not in str(caught.value)


def test_a_passing_preflight_is_recorded_apart_from_the_jobs_spend(tmp_path: Path) -> None:
    with FakeLLMServer(api_key=KEY, models=["fake-model"]) as server:
        code, stdout, stderr = _run(tmp_path, _config(tmp_path, server.url), KEY)
        stats = server.stats()
    assert code == 0, stdout + stderr
    assert f"preflight: {server.url} model fake-model (PREFLIGHT_KEY): ok" in stderr
    run = only_run_dir(tmp_path / "runs")
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    (check,) = [e for e in events if e["type"] == "preflight"]
    # a list that needs the key and names the model proves both: no completion is sent
    assert check["ok"] and check["method"] == "models" and check["requests"] == 2
    assert KEY not in (run / "events.jsonl").read_text()
    summary = json.loads((run / "summary.json").read_text())
    assert summary["llm_calls"] == stats["ok"] == stats["requests"] - check["requests"]


def test_no_preflight_runs_a_job_whose_refused_key_stops_the_run(tmp_path: Path) -> None:
    """Without the check the first job meets the 401: it fails with the provider's error, once and
    whole, no other job starts, and the run exits 2 naming the variable."""
    with FakeLLMServer(api_key=KEY) as server:
        code, _, stderr = _run(tmp_path, _config(tmp_path, server.url, extra=", max_retries: 0"), WRONG,
                               "--no-preflight", "--quiet", "--max-workers", "1")
    assert code == 2, stderr
    (error,) = _errors(stderr)
    assert "the provider refused the key in PREFLIGHT_KEY (HTTP 401: invalid api key)" in error
    assert "trace-bench run --resume" in error and WRONG not in stderr
    run = only_run_dir(tmp_path / "runs")
    (result,) = [json.loads(p.read_text()) for p in run.glob("jobs/*/results.json")]
    assert result["error"].endswith("AuthenticationError: HTTP 401: invalid api key"), result["error"]
    assert result["error"].count("AuthenticationError") == 1
    assert result["key_refused"] == {"key_variable": "PREFLIGHT_KEY", "kind": "auth", "status": 401,
                                     "message": "HTTP 401: invalid api key"}


def test_one_check_per_distinct_endpoint_model_and_key_variable() -> None:
    llm = {"base_url": "http://127.0.0.1:1/v1", "model": "a", "api_key_env": "K1",
           "roles": {"agent": {"model": "b"}, "judge": {"model": "a", "api_key_env": "K2"}}}
    found = [(t.endpoint, t.model, t.key_variable) for t in targets(llm)]
    assert found == [("http://127.0.0.1:1/v1", "a", "K1"), ("http://127.0.0.1:1/v1", "b", "K1"),
                     ("http://127.0.0.1:1/v1", "a", "K2")]

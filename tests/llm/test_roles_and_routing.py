"""Per-role models and provider routing, end to end against a recording fake server.

Every CLI run here happens under a network guard: each process refuses and logs any connection or
name lookup outside loopback, so "the requests reached the configured endpoint and nothing else"
is checked, not assumed.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from tests.conftest import USER_TASKS, only_run_dir, run_cli
from tests.llm.servers import RecordingServer, network_guard, preflight_requests

OPENROUTER_KEY = "sk-or-v1-" + "planted0123456789abcdef0123456789"
OPENAI_KEY = "sk-" + "plantedOpenAI0123456789abcdefXYZ"


def _run(tmp_path: Path, config_text: str, env: dict[str, str | None]) -> Path:
    config = tmp_path / "c.yaml"
    config.write_text(config_text)
    guard_env, log = network_guard(tmp_path)
    # the keys and endpoints a test sets are the only ones: nothing leaks in from the machine
    clean: dict[str, str | None] = {name: None for name in ("OPENAI_API_KEY", "OPENROUTER_API_KEY", "OPENAI_API_BASE", "OPENAI_BASE_URL",
                                   "TRACE_LITELLM_MODEL", "DEFAULT_LITELLM_MODEL", "TRACE_DEFAULT_LLM_BACKEND")}
    proc = run_cli("run", "--config", str(config), "--root", str(USER_TASKS), "--runs-dir", str(tmp_path / "runs"),
                   "--quiet", env={**clean, **guard_env, **env}, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert log.read_text() == "", f"traffic outside loopback: {log.read_text()}"
    return only_run_dir(tmp_path / "runs")


def _records(run: Path) -> list[dict[str, Any]]:
    return [json.loads(p.read_text()) for p in sorted(run.glob("jobs/*/results.json"))]


def _assert_no_secret(run: Path, *secrets: str) -> None:
    for path in run.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert not any(secret.encode() in data for secret in secrets), path


def test_optimizer_and_agent_roles_reach_their_own_models(tmp_path: Path) -> None:
    with RecordingServer(models=["shared-model", "optimizer-model", "agent-model"]) as server:
        run = _run(tmp_path, f"""
mode: real
tasks: [agent_instruction]
trainers:
  - id: PrioritySearch
    ps_steps: 2
seeds: [1, 2]
max_workers: 2
llm:
  base_url: {server.url}
  model: shared-model
  roles:
    optimizer: {{model: optimizer-model}}
    agent: {{model: agent-model}}
""", {})
        received = Counter(server.models)
    preflight = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines() if '"preflight"' in line]
    assert {e["model"] for e in preflight} == {"optimizer-model", "agent-model", "shared-model"}, "one check each"
    received -= Counter(e["model"] for e in preflight if e["method"] == "completion")  # the run's, not a job's
    assert set(received) == {"optimizer-model", "agent-model"}, received
    by_role: Counter[str] = Counter()
    for record in _records(run):
        assert record["status"] == "ok", record["error"]
        for role, usage in record["usage_by_role"].items():
            by_role[role] += usage["llm_calls"]
    assert by_role == {"optimizer": received["optimizer-model"], "agent": received["agent-model"]}
    for events in run.glob("jobs/*/events.jsonl"):
        for event in map(json.loads, events.read_text().splitlines()):
            if event["type"] == "llm_call":
                assert event["model"].endswith(f"{event['role']}-model"), event


def test_openai_api_base_routes_every_request_to_it(tmp_path: Path) -> None:
    with RecordingServer(api_key=OPENAI_KEY, models=["gpt-4o-mini"]) as server:
        run = _run(tmp_path, "mode: real\ntasks: [internal:numeric_param]\n"
                             "trainers:\n  - id: PrioritySearch\n    ps_steps: 2\nllm: {model: gpt-4o-mini}\n",
                   {"OPENAI_API_BASE": server.url, "OPENAI_API_KEY": OPENAI_KEY})
        stats, models = server.stats(), list(server.models)
    [record] = _records(run)
    checks, completions = preflight_requests(run)  # the preflight's requests are the run's, not the job's
    assert record["status"] == "ok" and record["llm_calls"] == stats["requests"] - checks == stats["ok"] - completions > 0
    assert set(models) == {"gpt-4o-mini"}
    _assert_no_secret(run, OPENAI_KEY)


def test_openrouter_config_of_the_original_reaches_the_endpoint_with_its_model(tmp_path: Path) -> None:
    """The seeds' config form: provider openrouter, base_url, model with the openrouter/ prefix; the
    OpenRouter key only.  The endpoint gets OpenRouter's own model id and that key."""
    with RecordingServer(api_key=OPENROUTER_KEY) as server:
        run = _run(tmp_path, f"""
mode: real
tasks: [internal:numeric_param]
trainers:
  - id: PrioritySearch
    ps_steps: 2
llm:
  provider: openrouter
  base_url: {server.url}
  model: openrouter/x-ai/grok-4.1-fast
""", {"OPENROUTER_API_KEY": OPENROUTER_KEY})
        stats, models = server.stats(), list(server.models)
    [record] = _records(run)
    assert record["status"] == "ok" and record["llm_calls"] == stats["ok"] - preflight_requests(run)[1] > 0
    assert stats["by_status"].get("401") is None, "the OpenRouter key was sent"
    assert set(models) == {"x-ai/grok-4.1-fast"}
    _assert_no_secret(run, OPENROUTER_KEY)


def test_openrouter_environment_of_the_original_routes_through_litellm(tmp_path: Path) -> None:
    """The seeds' environment form: OPENAI_API_BASE at OpenRouter, both keys set to the OpenRouter
    key, TRACE_LITELLM_MODEL=openrouter/...; the config names no model."""
    with RecordingServer(api_key=OPENROUTER_KEY) as server:
        run = _run(tmp_path, "mode: real\ntasks: [internal:numeric_param]\n"
                             "trainers:\n  - id: PrioritySearch\n    ps_steps: 1\n",
                   {"OPENAI_API_BASE": server.url, "OPENROUTER_API_KEY": OPENROUTER_KEY,
                    "OPENAI_API_KEY": OPENROUTER_KEY, "TRACE_LITELLM_MODEL": "openrouter/x-ai/grok-4.1-fast"})
        stats, models = server.stats(), list(server.models)
    [record] = _records(run)
    assert record["status"] == "ok" and record["llm_calls"] == stats["ok"] - preflight_requests(run)[1] > 0, \
        record["error"]
    assert set(models) == {"x-ai/grok-4.1-fast"}
    assert record["llm_model"] == "openrouter/x-ai/grok-4.1-fast", "the model the job really used"
    _assert_no_secret(run, OPENROUTER_KEY)


def test_the_network_guard_sees_traffic_outside_loopback(tmp_path: Path) -> None:
    """The guard itself: a run pointed at an address off this machine is refused and logged (by the
    preflight, before any job: exit 2 naming the endpoint)."""
    config = tmp_path / "c.yaml"
    config.write_text("mode: real\ntasks: [internal:numeric_param]\ntrainers: [PrioritySearch]\n"
                      "llm: {base_url: 'http://192.0.2.1:9/v1', model: m, max_retries: 0, timeout_s: 5}\n")
    guard_env, log = network_guard(tmp_path)
    guard_env["OPENAI_API_KEY"] = "sk-test-not-a-key"  # a real-mode run checks credentials before any job
    proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet", env=guard_env)
    assert proc.returncode == 2 and "cannot reach http://192.0.2.1:9/v1" in proc.stderr
    assert "192.0.2.1" in log.read_text()


def test_the_readme_real_llm_example_takes_its_model_from_trace_litellm_model(tmp_path: Path) -> None:
    """configs/smoke_real.yaml as the README runs it, against a local endpoint given by the
    original's OPENAI_API_BASE: the model named by TRACE_LITELLM_MODEL is the one requested."""
    from tests.conftest import REPO

    with RecordingServer(api_key=OPENAI_KEY, models=["env-model"]) as server:
        run = _run(tmp_path, (REPO / "configs" / "smoke_real.yaml").read_text(),
                   {"OPENAI_API_BASE": server.url, "OPENAI_API_KEY": OPENAI_KEY, "TRACE_LITELLM_MODEL": "env-model"})
        models = set(server.models)
    [record] = _records(run)
    assert record["status"] == "ok", record["error"]
    assert models == {"env-model"} and record["llm_model"] == "env-model"

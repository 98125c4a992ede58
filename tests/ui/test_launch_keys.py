"""Launches from the UI send the server's API keys only to the endpoint configured at server start
or to this machine; any other ``llm.base_url`` needs a key typed for that launch.

The "foreign" provider is a fake server reached as ``http://0.0.0.0:PORT``: on Linux that address
reaches this machine's listeners, but it is not a loopback name, so the policy treats it as any
remote endpoint.  The fake server accepts only the typed key, so a request carrying the server's
key would show up as a 401 in its statistics; it lists its models to anyone (``public_models``), so
the preflight's keyless look at that list is no 401 (the preflight then proves the key with a
one-token completion, which carries it).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trace_bench.llm.fake_server import FakeLLMServer
from trace_bench.ui.launcher import Launcher, LaunchError

SERVER_KEY = "sk-server-side-" + "s" * 24
TYPED_KEY = "sk-typed-for-launch-" + "t" * 20


def _config(url: str, key_env: str = "OPENAI_API_KEY") -> str:
    return (f"mode: real\ntasks: [internal:numeric_param]\ntrainers:\n  - id: PrioritySearch\n    ps_steps: 1\n"
            f"llm:\n  base_url: {url}\n  model: fake-model\n  api_key_env: {key_env}\n  max_retries: 0\n"
            "  prices: {fake-model: {input_per_mtok: 0.5, output_per_mtok: 1.5}}\n")


@pytest.fixture
def server_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", SERVER_KEY)
    for name in ("OPENAI_API_BASE", "OPENAI_BASE_URL", "TRACE_DEFAULT_LLM_BACKEND", "TRACE_CUSTOMLLM_URL"):
        monkeypatch.delenv(name, raising=False)


def _foreign(server: FakeLLMServer) -> str:
    return server.url.replace("127.0.0.1", "0.0.0.0")


def test_a_foreign_endpoint_without_a_typed_key_is_refused(tmp_path: Path, server_env: None) -> None:
    with FakeLLMServer() as server:
        launcher = Launcher(tmp_path / "runs")
        with pytest.raises(LaunchError, match="Type the API key"):
            launcher.start(_config(_foreign(server)))
        for role_config in (_config("http://127.0.0.1:9/v1") + "  roles:\n    judge: {base_url: "
                            + _foreign(server) + "}\n",):
            with pytest.raises(LaunchError, match="0.0.0.0"):
                launcher.start(role_config)
        assert launcher.launches == {}
        assert server.stats()["requests"] == 0 and not server.stats()["by_status"]


def test_a_typed_key_goes_to_the_foreign_endpoint_and_the_server_key_does_not(tmp_path: Path,
                                                                              server_env: None) -> None:
    with FakeLLMServer(api_key=TYPED_KEY, public_models=True) as server:
        launcher = Launcher(tmp_path / "runs")
        launch = launcher.start(_config(_foreign(server)), api_key=TYPED_KEY)
        assert launch.process.wait(300) == 0, launch.log_path.read_text()
        stats = server.stats()
    assert stats["requests"] > 0 and set(stats["by_status"]) == {"200"}, stats
    run_dir = launch.resolve_run_dir()
    assert run_dir is not None
    env = json.loads((run_dir / "meta" / "env.json").read_text())["env"]
    assert env.get("OPENAI_API_KEY") == "***"  # the typed key, under the config's variable
    for path in run_dir.rglob("*"):
        if path.is_file():
            data = path.read_bytes()
            assert SERVER_KEY.encode() not in data and TYPED_KEY.encode() not in data, path


def test_the_server_key_may_go_to_loopback_and_to_the_endpoint_configured_at_start(
        tmp_path: Path, server_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeLLMServer(api_key=SERVER_KEY, public_models=True) as server:
        launch = Launcher(tmp_path / "runs").start(_config(server.url))  # loopback: the server's key is fine
        assert launch.process.wait(300) == 0, launch.log_path.read_text()
        monkeypatch.setenv("OPENAI_API_BASE", _foreign(server) + "/")
        trusting = Launcher(tmp_path / "runs")  # this "server" started with that endpoint configured
        monkeypatch.delenv("OPENAI_API_BASE")
        launch = trusting.start(_config(_foreign(server)))
        assert launch.process.wait(300) == 0, launch.log_path.read_text()
        stats = server.stats()
    assert stats["requests"] > 0 and set(stats["by_status"]) == {"200"}, stats


def test_resume_applies_the_same_policy(tmp_path: Path, server_env: None) -> None:
    run_dir = tmp_path / "runs" / "old-run"
    (run_dir / "meta").mkdir(parents=True)
    (run_dir / "meta" / "config.snapshot.yaml").write_text(_config("https://elsewhere.example.org/v1"))
    with pytest.raises(LaunchError, match="elsewhere.example.org"):
        Launcher(tmp_path / "runs").resume(run_dir)


def test_resume_after_stop_sends_the_key_typed_at_start(tmp_path: Path, server_env: None) -> None:
    """The key typed at Start stays in the server's memory for that run: Resume (with the key box
    empty) sends it again; a server that no longer holds it (restarted) asks for it."""
    from tests.waiting import PATIENCE_S, wait_for_events

    with FakeLLMServer(api_key=TYPED_KEY, latency=0.2, public_models=True) as server:
        text = _config(_foreign(server)) + "seeds: [1, 2, 3]\n"  # jobs left for the resume, whenever Stop lands
        launcher = Launcher(tmp_path / "runs")
        launch = launcher.start(text, api_key=TYPED_KEY)
        wait_for_events(launch.run_dir / "events.jsonl", "job_started", 1, process=launch.process)
        launcher.stop(launch)
        launch.process.wait(PATIENCE_S)
        before = server.stats()["requests"]
        resumed = launcher.resume(launch.run_dir)  # the key box is empty
        assert resumed.process.wait(PATIENCE_S) == 0, resumed.log_path.read_text()
        stats = server.stats()
    assert stats["requests"] > before
    assert set(stats["by_status"]) == {"200"}, f"every request carried the typed key: {stats}"
    with pytest.raises(LaunchError, match="Type the API key"):
        Launcher(tmp_path / "runs").resume(launch.run_dir)  # a restarted server holds no typed key

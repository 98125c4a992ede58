"""``llm.max_tokens`` is a hard cap on every request sent through the harness.

OptoPrime and TextGrad ask for 4,096 completion tokens on every call, and libraries behind the
gateway ask for what they like; the fake provider records the limit each request carried.
"""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from urllib.parse import urlsplit

from tests.conftest import run_cli
from trace_bench.llm.factory import build_session
from trace_bench.llm.fake_server import FakeLLMServer
from trace_bench.llm.gateway import start_gateway

MESSAGES = [{"role": "user", "content": "What is 2 + 2?"}]


def test_optimizers_own_max_tokens_is_capped_by_the_config(tmp_path: Path) -> None:
    with FakeLLMServer() as server:
        config = tmp_path / "c.yaml"
        config.write_text(f"""
mode: real
tasks: [internal:numeric_param]
trainers:
  - {{id: MinibatchAlgorithm, num_steps: 2, optimizer: OptoPrime}}
  - {{id: MinibatchAlgorithm, num_steps: 2, optimizer: TextGrad}}
seeds: [1]
llm: {{base_url: "{server.url}", model: fake-model, max_tokens: 64,
      prices: {{fake-model: {{input_per_mtok: 0.5, output_per_mtok: 1.5}}}}}}
""")
        proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "r"), "--quiet")
        stats = server.stats()
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert stats["ok"] >= 4
    # the preflight's one-token check (the fake server's model list needs no key) aside
    assert stats["max_tokens"] == {"64": stats["ok"] - 1, "1": 1}, "OptoPrime and TextGrad send 4096 of their own"


def _post(url: str, body: dict[str, object], key: str) -> int:
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname, parts.port, timeout=60)
    conn.request("POST", f"{parts.path}/chat/completions", body=json.dumps(body),
                 headers={"Content-Type": "application/json", "Authorization": f"Bearer {key}"})
    status = conn.getresponse().status
    conn.close()
    return status


def test_requests_through_the_gateway_are_capped_per_role() -> None:
    """The lower of the caller's value and the cap is sent, the cap when the caller gave none; a
    role's own ``max_tokens`` wins over the run's."""
    with FakeLLMServer() as server:
        llm = {"base_url": server.url, "model": "fake-model", "max_tokens": 64,
               "roles": {"optimizer": {"max_tokens": 32}}}
        session = build_session(mode="real", llm=llm, budget={}, seed=0)
        with start_gateway(session) as gateway:
            for body in ({"max_tokens": 4096}, {"max_completion_tokens": 4096}, {}, {"max_tokens": 10}):
                assert _post(gateway.base_url, {"model": "x", "messages": MESSAGES, **body}, gateway.api_key) == 200
            assert _post(gateway.base_url, {"model": "trace-bench-optimizer", "messages": MESSAGES,
                                            "max_tokens": 4096}, gateway.api_key) == 200
        stats = server.stats()
    assert stats["max_tokens"] == {"64": 3, "10": 1, "32": 1}

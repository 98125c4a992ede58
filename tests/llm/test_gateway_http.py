"""Gateway HTTP contract: token checks on every route, role routing, n > 1, streaming, budget stops
that SDKs do not retry, masked provider errors, and exact usage when forwarding to a real session."""

from __future__ import annotations

import http.client
import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from trace_bench.llm.errors import AuthenticationError, BudgetExhausted
from trace_bench.llm.factory import build_session
from trace_bench.llm.fake_server import FakeLLMServer
from trace_bench.llm.gateway import Gateway, role_of, start_gateway
from trace_bench.llm.session import LLMSession
from trace_bench.store.events import EventLog

MESSAGES = [{"role": "user", "content": "What is 2 + 2?"}]
PLANTED = "sk-planted" + "Zx9Yw8Vu7Ts6Rq5Po4"


def _request(gateway: Gateway, method: str, path: str, body: Any = None, key: str | None = "",
             headers: dict[str, str] | None = None) -> tuple[int, dict[str, str], bytes]:
    url = urlsplit(gateway.base_url)
    conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
    token = gateway.api_key if key == "" else key
    sent = {"Content-Type": "application/json", **({"Authorization": f"Bearer {token}"} if token else {}),
            **(headers or {})}
    data = body if isinstance(body, bytes) else (json.dumps(body).encode() if body is not None else None)
    conn.request(method, f"{url.path}{path}", body=data, headers=sent)
    response = conn.getresponse()
    payload = response.read()
    conn.close()
    return response.status, {k.lower(): v for k, v in response.getheaders()}, payload


def _stub(budget: dict[str, Any] | None = None) -> LLMSession:
    return build_session(mode="stub", llm={}, budget=budget or {}, seed=0)


def test_every_route_needs_the_token() -> None:
    with start_gateway(_stub()) as gateway:
        assert _request(gateway, "GET", "/models", key=None)[0] == 401
        assert _request(gateway, "GET", "/models", key="tbgw-wrong")[0] == 401
        status, _, body = _request(gateway, "GET", "/models")
        assert status == 200 and "trace-bench-agent" in {m["id"] for m in json.loads(body)["data"]}
        assert _request(gateway, "POST", "/chat/completions", {"messages": MESSAGES}, key=None)[0] == 401
        assert _request(gateway, "GET", "/nowhere")[0] == 404


@pytest.mark.parametrize(("header", "model", "role"), [
    ("optimizer", "gpt-4o", "optimizer"), (None, "trace-bench-judge", "judge"), (None, "x:optimizer", "optimizer"),
    (None, "gpt-4o", "agent"), ("nonsense", "gpt-4o", "agent"),
])
def test_role_comes_from_the_header_or_the_model_suffix(header: str | None, model: str, role: str) -> None:
    assert role_of(header, model) == role
    session = _stub()
    with start_gateway(session) as gateway:
        status, _, _ = _request(gateway, "POST", "/chat/completions", {"model": model, "messages": MESSAGES},
                                headers={"X-Trace-Role": header} if header else None)
    assert status == 200
    assert session.totals.by_role[role].llm_calls == 1


def test_n_samples_streaming_and_bad_bodies() -> None:
    session = _stub()
    with start_gateway(session) as gateway:
        status, _, body = _request(gateway, "POST", "/chat/completions", {"messages": MESSAGES, "n": 3})
        data = json.loads(body)
        assert status == 200 and len(data["choices"]) == 3
        assert data["usage"]["total_tokens"] == session.totals.total_tokens
        status, headers, body = _request(gateway, "POST", "/chat/completions", {"messages": MESSAGES, "stream": True})
        assert status == 200 and headers["content-type"] == "text/event-stream"
        chunks = [line[6:] for line in body.decode().splitlines() if line.startswith("data: ")]
        assert chunks[-1] == "[DONE]" and json.loads(chunks[0])["choices"][0]["delta"]["content"]
        assert _request(gateway, "POST", "/chat/completions", b"{not json")[0] == 400
        assert _request(gateway, "POST", "/chat/completions", {"messages": []})[0] == 400
    assert session.totals.llm_calls == 2


def test_budget_stop_is_429_not_retried_by_the_openai_sdk() -> None:
    import openai

    session = _stub({"llm_calls": 1})
    with start_gateway(session) as gateway:
        client = openai.OpenAI(base_url=gateway.base_url, api_key=gateway.api_key, max_retries=3)
        reply = client.chat.completions.create(model="trace-bench-agent", messages=MESSAGES)  # type: ignore[arg-type]
        assert reply.choices[0].message.content and reply.usage and reply.usage.total_tokens > 0
        with pytest.raises(openai.RateLimitError) as caught:
            client.chat.completions.create(model="trace-bench-agent", messages=MESSAGES)  # type: ignore[arg-type]
        assert caught.value.status_code == 429 and "budget_exhausted" in str(caught.value.body)
        assert gateway.requests == 2, "x-should-retry: false stops the SDK's own retries"
        with pytest.raises(BudgetExhausted):
            gateway.raise_if_exhausted()
    assert session.totals.llm_calls == 1


class _LeakyBackend:
    model = "leaky"

    def complete(self, messages: list[dict[str, Any]], *, n: int = 1, sample_index: int = 0, **params: Any) -> Any:
        raise AuthenticationError(f"Incorrect API key provided: {PLANTED}", status=401)


def test_provider_errors_are_masked_and_keep_their_status(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    events = EventLog(tmp_path / "events.jsonl")
    session = LLMSession({"optimizer": _LeakyBackend()}, events=events.write)
    with start_gateway(session) as gateway:
        status, _, body = _request(gateway, "POST", "/chat/completions", {"messages": MESSAGES})
        assert PLANTED not in body.decode() and gateway.api_key not in body.decode()
    events.close()
    assert status == 401 and json.loads(body)["error"]["type"] == "AuthenticationError"
    written = (tmp_path / "events.jsonl").read_text()
    assert "AuthenticationError" in written and PLANTED not in written


def test_forwarding_to_a_real_session_meters_exactly_what_the_provider_returned() -> None:
    with FakeLLMServer() as server:
        session = build_session(mode="real", llm={"base_url": server.url, "model": "fake-model", "max_retries": 0},
                                budget={}, seed=0)
        with start_gateway(session) as gateway:
            for i in range(5):
                body = {"model": "trace-bench-optimizer", "messages": [{"role": "user", "content": f"q{i}"}]}
                assert _request(gateway, "POST", "/chat/completions", body)[0] == 200
        stats = server.stats()
    assert session.totals.llm_calls == stats["requests"] == 5
    assert session.totals.prompt_tokens == stats["prompt_tokens"]
    assert session.totals.completion_tokens == stats["completion_tokens"]
    assert session.totals.by_role["optimizer"].llm_calls == 5

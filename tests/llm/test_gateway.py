"""The loopback gateway meters, budgets and protects calls made by external libraries."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

from trace_bench.llm.factory import build_session
from trace_bench.llm.gateway import start_gateway


def _post(url: str, key: str | None, body: dict) -> tuple[int, dict]:
    request = urllib.request.Request(f"{url}/chat/completions", data=json.dumps(body).encode(), method="POST",
                                     headers={"Content-Type": "application/json",
                                              **({"Authorization": f"Bearer {key}"} if key else {})})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read())


def test_gateway_meters_budgets_and_checks_the_token() -> None:
    session = build_session(mode="stub", llm={}, budget={"llm_calls": 2}, seed=0)
    with start_gateway(session) as gateway:
        body = {"model": "anything", "messages": [{"role": "user", "content": "What is 2 + 2?"}]}
        assert _post(gateway.base_url, None, body)[0] == 401
        assert _post(gateway.base_url, "wrong", body)[0] == 401
        status, data = _post(gateway.base_url, gateway.api_key, body)
        assert status == 200 and data["choices"][0]["message"]["content"]
        assert data["usage"]["total_tokens"] == session.totals.total_tokens > 0
        assert _post(gateway.base_url, gateway.api_key, body)[0] == 200
        status, data = _post(gateway.base_url, gateway.api_key, body)
        assert status == 429 and data["error"]["code"] == "budget_exhausted"
        assert gateway.budget_error is not None
    assert session.totals.llm_calls == 2
    assert session.totals.by_role["agent"].llm_calls == 2

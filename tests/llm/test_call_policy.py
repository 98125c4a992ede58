"""The per-call policy of real mode: retries (Retry-After in seconds or as an HTTP date, bounded,
seeded jitter, fail-fast errors), budgets in every unit, cost flags, and secrets kept out of errors
and events.  Unit checks use the retry loop directly; the rest goes through the fake server."""

from __future__ import annotations

import email.utils
import random
import time
from pathlib import Path
from typing import Any

import pytest

from tests.waiting import PATIENCE_S, wait_until
from trace_bench.llm import retry
from trace_bench.llm.errors import (
    AuthenticationError,
    BudgetExhausted,
    LLMError,
    LLMTimeoutError,
    RateLimitError,
    ServerError,
)
from trace_bench.llm.factory import build_session
from trace_bench.llm.fake_server import FakeLLMServer
from trace_bench.store.events import EventLog

PLANTED = "sk-planted" + "Mn8Bv7Cx6Zl5Kj4Hg3"


class _HTTPFailure(Exception):
    """Shaped like a provider SDK error: a status code and a response with headers."""

    def __init__(self, status: int, headers: dict[str, str] | None = None, text: str = "failed") -> None:
        super().__init__(text)
        self.status_code = status
        self.response = type("Response", (), {"headers": headers or {}, "status_code": status})()


def _failing(errors: list[Exception]) -> Any:
    calls = {"n": 0}

    def call() -> str:
        calls["n"] += 1
        if errors:
            raise errors.pop(0)
        return "ok"

    call.calls = calls  # type: ignore[attr-defined]
    return call


@pytest.fixture
def sleeps(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    slept: list[float] = []
    monkeypatch.setattr(retry.time, "sleep", slept.append)
    return slept


def test_retry_after_seconds_and_http_date_are_honoured(sleeps: list[float]) -> None:
    future = email.utils.formatdate(time.time() + 20, usegmt=True)
    call = _failing([_HTTPFailure(429, {"retry-after": "7"}), _HTTPFailure(503, {"Retry-After": future})])
    result, retries = retry.call_with_retries(call, max_retries=3, rng=random.Random(0))
    assert (result, retries) == ("ok", 2)
    assert sleeps[0] >= 7 and 17 <= sleeps[1] <= 30


def test_retries_are_bounded_and_the_typed_error_propagates(sleeps: list[float]) -> None:
    call = _failing([_HTTPFailure(500) for _ in range(10)])
    with pytest.raises(ServerError) as caught:
        retry.call_with_retries(call, max_retries=3, rng=random.Random(0))
    assert call.calls["n"] == 4 and caught.value.retries == 3  # type: ignore[attr-defined]
    assert len(sleeps) == 3 and all(0 <= s <= 30 for s in sleeps)


def test_jitter_is_seeded(monkeypatch: pytest.MonkeyPatch) -> None:
    def delays(seed: int) -> list[float]:
        slept: list[float] = []
        monkeypatch.setattr(retry.time, "sleep", slept.append)
        with pytest.raises(LLMError):
            retry.call_with_retries(_failing([_HTTPFailure(502) for _ in range(5)]), max_retries=4,
                                    rng=random.Random(seed))
        return slept

    assert delays(1) == delays(1) != delays(2)


@pytest.mark.parametrize(("error", "kind"), [
    (_HTTPFailure(401), AuthenticationError), (_HTTPFailure(400), LLMError),
    (_HTTPFailure(429), RateLimitError), (TimeoutError("read timed out"), LLMTimeoutError),
])
def test_classification(error: Exception, kind: type[LLMError], sleeps: list[float]) -> None:
    typed = retry.classify(error)
    assert isinstance(typed, kind)
    if not typed.retryable:
        call = _failing([error])
        with pytest.raises(kind):
            retry.call_with_retries(call, max_retries=5)
        assert call.calls["n"] == 1 and not sleeps, "non-retryable errors fail fast"


def test_provider_error_text_is_masked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    typed = retry.classify(_HTTPFailure(401, text=f"Incorrect API key provided: {PLANTED}."))
    assert PLANTED not in str(typed) and "Incorrect API key" in str(typed)


def _session(url: str, budget: dict[str, Any] | None = None, events: Any = None, **llm: Any) -> Any:
    config = {"base_url": url, "model": "fake-model", "max_retries": 3, "timeout_s": 5, **llm}
    return build_session(mode="real", llm=config, budget=budget or {}, seed=0, events=events)


def _ask(session: Any, i: int) -> str:
    reply = session.client("optimizer")(messages=[{"role": "user", "content": f"question {i}"}])
    return str(reply.choices[0].message.content)


def test_rate_limits_are_retried_after_the_servers_delay_and_shown_in_events() -> None:
    events: list[dict[str, Any]] = []
    with FakeLLMServer(rate_limit_every=2) as server:
        session = _session(server.url, events=events.append)
        started = time.perf_counter()
        for i in range(4):
            _ask(session, i)
        elapsed = time.perf_counter() - started
        stats = server.stats()
    limited = stats["by_status"].get("429", 0)
    assert limited >= 2 and session.totals.retries == limited
    assert sum(e["retries"] for e in events) == limited
    assert elapsed >= 0.05 * limited, "Retry-After (0.05 s) is a lower bound on each wait"
    assert session.totals.llm_calls == 4 and session.totals.errors == 0


def test_timeouts_and_malformed_bodies_end_in_a_clear_llm_error() -> None:
    # The server hangs for minutes: only the client's own 0.3 s timeout can end these calls.
    with FakeLLMServer(timeout_rate=1.0, hang_s=PATIENCE_S) as server:
        session = _session(server.url, max_retries=1, timeout_s=0.3)
        with pytest.raises(LLMTimeoutError) as caught:
            _ask(session, 0)
        assert caught.value.retries == 1  # type: ignore[attr-defined]
        # the server counts a request once its thread has read it, which the client's timeout may precede
        wait_until(lambda: server.stats()["requests"] == 2, what="both attempts counted by the server")
        assert server.stats()["by_status"] == {}, "the server never answered"
    with FakeLLMServer(malformed_rate=1.0) as server:
        session = _session(server.url, max_retries=2)
        with pytest.raises(LLMError) as caught:
            _ask(session, 0)
        assert server.stats()["requests"] == 3 and caught.value.retryable
    # the provider answered each attempt (200, a broken body) and bills it: three estimated calls
    assert session.totals.errors == 1 and session.totals.llm_calls == 3 and session.totals.estimated


@pytest.mark.parametrize("unit", ["llm_calls", "tokens", "usd"])
@pytest.mark.parametrize("max_tokens", [None, 40])
def test_budgets_stop_before_the_providers_count_crosses_the_limit(unit: str, max_tokens: int | None) -> None:
    """Every unit stops at the call that could cross its limit: the provider's own count of what it
    served (and its USD at the model's price) never exceeds the limit.  A call without a completion
    limit is sent with what the budget has left."""
    limits = {"llm_calls": 3, "tokens": 600, "usd": 0.6}
    prices = {"fake-model": {"input_per_mtok": 1000.0, "output_per_mtok": 1000.0}}  # 0.001 USD a token
    with FakeLLMServer() as server:
        session = _session(server.url, budget={unit: limits[unit]}, prices=prices, max_tokens=max_tokens)
        asked = 0
        with pytest.raises(BudgetExhausted) as caught:
            for i in range(100):
                _ask(session, i)
                asked += 1
        stats = server.stats()
    served = {"llm_calls": stats["ok"], "tokens": stats["total_tokens"], "usd": stats["total_tokens"] / 1000}
    spent = {"llm_calls": session.totals.llm_calls, "tokens": session.totals.total_tokens,
             "usd": session.totals.cost_usd}
    assert caught.value.resource == unit and stats["requests"] == asked == session.totals.llm_calls >= 1
    assert served[unit] <= limits[unit] and spent[unit] == pytest.approx(served[unit])
    if unit == "llm_calls":
        assert asked == 3
    else:  # refused for the next call's worst case, not because the limit was reached
        assert caught.value.needed > 0 and caught.value.spent + caught.value.needed > limits[unit]


def test_cost_is_flagged_unknown_without_a_price(tmp_path: Path) -> None:
    events: list[dict[str, Any]] = []
    with FakeLLMServer() as server:
        _ask(_session(server.url, events=events.append), 0)
        _ask(_session(server.url, events=events.append,
                      prices={"fake-model": {"input_per_mtok": 1.0, "output_per_mtok": 2.0}}), 0)
    assert [e["cost_known"] for e in events] == [False, True]
    assert events[0]["cost_usd"] == 0 and events[1]["cost_usd"] > 0


def test_a_planted_key_never_reaches_errors_or_events(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PLANTED)
    log = EventLog(tmp_path / "events.jsonl")
    with FakeLLMServer(api_key="sk-the-server-wants-" + "another1234567") as server:
        session = _session(server.url, events=log.write)
        with pytest.raises(AuthenticationError) as caught:
            _ask(session, 0)
        wait_until(lambda: server.stats()["by_status"],  # the server counts a status just after sending it
                   what="the server to count its answer")
        assert server.stats()["by_status"] == {"401": 1}, "authentication errors are not retried"
    log.close()
    assert PLANTED not in str(caught.value) and PLANTED not in repr(session.backends["optimizer"])
    assert PLANTED not in (tmp_path / "events.jsonl").read_text()


def test_custom_llm_environment_of_opto_is_honoured(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    from trace_bench.llm.providers import build_backend

    monkeypatch.setenv("TRACE_DEFAULT_LLM_BACKEND", "CustomLLM")
    monkeypatch.setenv("TRACE_CUSTOMLLM_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("TRACE_CUSTOMLLM_MODEL", "my-model")
    monkeypatch.setenv("TRACE_CUSTOMLLM_API_KEY", "sk-custom-0123456789abcdef")
    backend = build_backend({}, "optimizer", seed=0)
    assert backend.base_url == "http://127.0.0.1:9/v1"
    assert backend.model.endswith("my-model")
    assert backend._api_key == "sk-custom-0123456789abcdef"

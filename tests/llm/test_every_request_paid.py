"""Every request the provider received is paid for, and never below what the provider counted.

Against the fake provider on loopback, which counts what it served (``ok``, tokens) even when the
client is gone: a request the client timed out on (the server still runs it to its end), through
the gateway and for a measurement call too; a retry of a charged attempt reserves its worst case
again (the budget may refuse it); a call cancelled in flight; retries after a timeout spaced so
they do not pile onto the abandoned work; estimates never below a denser tokenizer's count.  The
server holds each request until the test releases it, so the client's timeout is certain.
"""

from __future__ import annotations

import json
import random
import threading
import urllib.error
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.llm.servers import StallingServer
from tests.waiting import wait_until
from trace_bench.config.models import BudgetConfig
from trace_bench.llm import retry
from trace_bench.llm.budget import Budget
from trace_bench.llm.errors import BudgetExhausted, LLMTimeoutError, ServerError
from trace_bench.llm.factory import build_session
from trace_bench.llm.gateway import start_gateway
from trace_bench.llm.providers import LiteLLMBackend
from trace_bench.llm.session import LLMSession
from trace_bench.llm.tokens import prompt_token_bound
from trace_bench.store.job_store import JobStore

CAP = 40
PRICE = {"input_per_mtok": 2.0, "output_per_mtok": 8.0}
MESSAGES = [{"role": "user", "content": "Propose a better value for x, in one line."}]


def _session(url: str, events: list[dict[str, Any]], budget: dict[str, Any] | None = None, **llm: Any) -> Any:
    config = {"base_url": url, "model": "fake-model", "max_retries": 1, "timeout_s": 0.2, "max_tokens": CAP,
              "prices": {"fake-model": PRICE}, **llm}
    return build_session(mode="real", llm=config, budget=budget or {}, seed=0, events=events.append)


def _served(server: StallingServer, count: int) -> dict[str, Any]:
    """The server's stats once it has served ``count`` completions and holds nothing."""
    server.release()
    return wait_until(lambda: (lambda s: s if s["ok"] == count and s["in_flight"] == 0 else None)(server.stats()),
                      what=f"{count} completions served")


def _gateway_post(session: Any) -> int:
    with start_gateway(session, phase="train") as gateway:
        request = urllib.request.Request(f"{gateway.base_url}/chat/completions", method="POST",
                                         data=json.dumps({"model": "m", "messages": MESSAGES}).encode(),
                                         headers={"Authorization": f"Bearer {gateway.api_key}"})
        try:
            with urllib.request.urlopen(request, timeout=60) as response:  # noqa: S310 - loopback
                return int(response.status)
        except urllib.error.HTTPError as exc:
            return exc.code


@pytest.mark.parametrize("route", ["direct", "gateway", "measure"])
def test_a_request_the_client_timed_out_on_is_charged_as_the_server_served_it(route: str) -> None:
    events: list[dict[str, Any]] = []
    with StallingServer(token_factor=1.6) as server:  # a tokenizer denser than the four-characters rule
        session = _session(server.url, events)
        if route == "gateway":
            assert _gateway_post(session) == 504
        else:
            with pytest.raises(LLMTimeoutError), session.measuring() if route == "measure" else _nothing():
                session.chat("optimizer", MESSAGES)
        stats = _served(server, 2)
    usage = session.totals.by_phase["measure" if route == "measure" else "train"]
    # the provider served (and bills) both attempts: both are charged, flagged, never below its count
    assert usage.llm_calls == stats["ok"] == stats["abandoned"] == 2 and usage.unanswered == 2 and usage.estimated
    assert usage.prompt_tokens >= stats["prompt_tokens"] and usage.completion_tokens == 2 * CAP
    assert usage.completion_tokens >= stats["completion_tokens"] and usage.errors == 1
    assert usage.cost_usd == pytest.approx((usage.prompt_tokens * 2.0 + usage.completion_tokens * 8.0) / 1e6)
    charged = [e for e in events if e.get("unanswered")]
    assert [e["unanswered"] for e in charged] == ["timed_out", "timed_out"] and all(e["timed_out"] for e in charged)


@contextmanager
def _nothing() -> Any:
    yield


@pytest.mark.parametrize("unit", ["llm_calls", "tokens", "usd"])
def test_the_retry_of_a_charged_attempt_reserves_again_and_the_budget_may_refuse_it(unit: str,
                                                                                     tmp_path: Path) -> None:
    """Two attempts' worst case fit the limit, a third does not: the call stops after two requests,
    which the provider served and the run charged, within the limit by the provider's count."""
    worst_tokens = prompt_token_bound(MESSAGES) + CAP
    limit = {"llm_calls": 2, "tokens": 2 * worst_tokens + 1,
             "usd": (2 * (prompt_token_bound(MESSAGES) * 2.0 + CAP * 8.0) + 1) / 1e6}[unit]
    events: list[dict[str, Any]] = []
    with StallingServer() as server:
        session = _session(server.url, events, budget={unit: limit}, max_retries=5)
        job = JobStore(tmp_path / "job")
        session.journal = job.open_spend_journal(durable=False)
        with pytest.raises(BudgetExhausted) as caught:
            session.chat("optimizer", MESSAGES)
        session.journal.close()
        stats = _served(server, 2)
    assert caught.value.resource == unit and stats["requests"] == 2 == session.totals.llm_calls
    served = {"llm_calls": stats["ok"], "tokens": stats["total_tokens"],
              "usd": (stats["prompt_tokens"] * 2.0 + stats["completion_tokens"] * 8.0) / 1e6}
    charged = {"llm_calls": session.totals.llm_calls, "tokens": session.totals.total_tokens,
               "usd": session.totals.cost_usd}
    assert served[unit] <= charged[unit] <= limit
    # each attempt is its own request in the spend journal: a kill between them loses neither
    assert job.read_spend() == {"llm_calls": 2, "tokens": session.totals.total_tokens,
                                "usd": round(session.totals.cost_usd, 10)}


class _Interrupted(LiteLLMBackend):
    """A provider request interrupted in flight (a stop raised in the calling thread)."""

    def complete(self, messages: list[dict[str, Any]], *, n: int = 1, sample_index: int = 0, **params: Any) -> Any:
        def send() -> Any:
            raise KeyboardInterrupt

        return self._attempts(messages, self._request(messages, n, params), send)


def test_a_call_cancelled_in_flight_is_charged() -> None:
    backend = _Interrupted(model="openai/fake-model", api_key=None, base_url="http://127.0.0.1:9/v1",
                           temperature=None, max_tokens=CAP, timeout_s=1.0, max_retries=3, prices={"fake-model": PRICE})
    events: list[dict[str, Any]] = []
    session = LLMSession({"optimizer": backend}, budget=Budget(BudgetConfig(llm_calls=5)), events=events.append)
    with pytest.raises(KeyboardInterrupt):
        session.chat("optimizer", MESSAGES)
    train = session.totals.by_phase["train"]
    assert (train.llm_calls, train.unanswered, train.completion_tokens) == (1, 1, CAP)
    assert train.prompt_tokens == prompt_token_bound(MESSAGES) and session.budget.reserved.llm_calls == 0
    assert [e["unanswered"] for e in events] == ["cancelled"]


class ReadTimeout(Exception):
    """Shaped like httpx's: raised after the request was sent."""


class ConnectTimeout(Exception):
    """Shaped like httpx's: the request never left."""


def _timed_out(cause: Exception) -> Exception:
    try:
        raise TimeoutError("timed out") from cause
    except TimeoutError as exc:
        return exc


def test_retries_after_client_timeouts_are_spaced_and_hold_the_concurrency_slot() -> None:
    """The k-th timeout in a row waits at least ``timeout_s * 2**(k-1)``, inside the run's
    concurrency slot (the server still works on the abandoned request); another error resets it."""
    failures: list[Exception] = [_timed_out(ReadTimeout()), _timed_out(ReadTimeout()),
                                 ServerError("bad gateway", status=502), _timed_out(ReadTimeout())]
    slept: list[float] = []
    held: list[bool] = []
    inside = threading.local()

    @contextmanager
    def slot() -> Any:
        inside.held = True
        yield
        inside.held = False

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        held.append(getattr(inside, "held", False))

    def call() -> str:
        if failures:
            raise failures.pop(0)
        return "ok"

    assert retry.call_with_retries(call, max_retries=5, rng=random.Random(0), timeout_s=2.0, hold=slot,
                                   sleep=sleep) == ("ok", 4)
    waits = [s for s, h in zip(slept, held, strict=True) if h]
    assert waits == [2.0, 4.0, 2.0], "doubling per timeout in a row, reset by the 502"
    assert sum(1 for h in held if not h) <= 4, "the jitter beyond it, outside the slot"


def test_only_a_request_that_left_is_charged_when_it_times_out() -> None:
    assert retry.reached_provider(_timed_out(ReadTimeout()))
    assert not retry.reached_provider(_timed_out(ConnectTimeout()))
    assert not retry.reached_provider(ServerError("gateway timeout", status=504))
    assert not retry.reached_provider(ConnectionRefusedError())

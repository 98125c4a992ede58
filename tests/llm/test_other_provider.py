"""Against a provider that is not the project's own fake (:mod:`tests.llm.other_provider`), every
behaviour a real or hostile provider shows: each request it billed is one charged call, the tokens
of each answer that carried a usable ``usage`` are exactly the provider's, the others are charged the
documented bound, and no answer escapes as anything but a typed error."""

from __future__ import annotations

from typing import Any

import pytest

from tests.llm.other_provider import BEHAVIOURS, BILLED, HOSTILE, REFUSED, OtherProvider
from trace_bench.llm.errors import LLMError
from trace_bench.llm.factory import build_session

MESSAGES = [{"role": "user", "content": "Propose a better value for x, in one line."}]
CAP = 64


def _session(url: str, events: list[dict[str, Any]], retries: int = 2) -> Any:
    llm = {"base_url": url, "model": "other-model", "max_retries": retries, "timeout_s": 30, "max_tokens": CAP,
           "prices": {"other-model": {"input_per_mtok": 1.0, "output_per_mtok": 4.0}}}
    return build_session(mode="real", llm=llm, budget={}, seed=0, events=events.append)


def _charged(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e.get("type") == "llm_call" and not e.get("error") and not e.get("cached")]


def test_every_behaviour_is_charged_as_the_provider_billed_it() -> None:
    events: list[dict[str, Any]] = []
    script = [b for behaviour in BEHAVIOURS for b in (behaviour, "plain")]
    with OtherProvider(script, slow_s=0.05, huge_bytes=300_000) as server:
        session = _session(server.url, events)
        while server.script:
            assert session.chat("optimizer", MESSAGES).choices, "each call ends in an answer after retries"
        billed, reported = server.billed, (server.prompt_tokens, server.completion_tokens)
        unreported, requests = server.unreported, server.requests
    totals = session.totals.by_phase["train"]
    assert requests == billed + len(REFUSED) and billed == len(BILLED) + len(HOSTILE) + len(BEHAVIOURS)
    assert totals.llm_calls == billed == len(_charged(events)), "a status refusal is free, every other request paid"
    exact = [e for e in _charged(events) if not e["estimated"]]
    assert (sum(e["prompt_tokens"] for e in exact), sum(e["completion_tokens"] for e in exact)) == reported
    assert len(_charged(events)) - len(exact) == unreported, "estimated exactly where no usable usage came back"
    for event in _charged(events):
        if event["estimated"]:
            assert event["prompt_tokens"] > 0 and event["completion_tokens"] <= CAP


def test_a_200_without_choices_is_charged_the_usage_it_reported() -> None:
    events: list[dict[str, Any]] = []
    with OtherProvider(["empty_choices", "choices_string"]) as server:
        session = _session(server.url, events, retries=0)
        for _ in range(2):
            with pytest.raises(LLMError):
                session.chat("optimizer", MESSAGES)
        reported = server.prompt_tokens + server.completion_tokens
    totals = session.totals.by_phase["train"]
    assert totals.llm_calls == 2 and totals.total_tokens == reported > 0 and not totals.estimated
    assert totals.unanswered == 2, "still an unusable answer: counted in llm_unanswered"

"""The budget journal: a training call is journaled before it is sent, so a kill mid-call is charged."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from trace_bench.config.models import BudgetConfig
from trace_bench.llm.backend import StubBackend
from trace_bench.llm.budget import Budget
from trace_bench.llm.errors import LLMError
from trace_bench.llm.session import LLMSession
from trace_bench.llm.stub import StubPolicy
from trace_bench.store.job_store import JobStore
from trace_bench.store.spend import read_spend

MESSAGES = [{"role": "user", "content": "x" * 40}]


class _Probe(StubBackend):
    """Checks, when called, what the journal already holds (as a provider receiving the request)."""

    def __init__(self, job: JobStore, fail: bool = False) -> None:
        super().__init__(StubPolicy(seed=1))
        self.job, self.fail, self.seen = job, fail, []

    def complete(self, messages: list[dict[str, Any]], **kwargs: Any) -> Any:
        self.seen.append(read_spend(self.job.spend_path))
        if self.fail:
            raise LLMError("provider down", status=500)
        return super().complete(messages, **kwargs)


def _session(tmp_path: Path, fail: bool = False) -> tuple[LLMSession, _Probe, JobStore]:
    job = JobStore(tmp_path / "job")
    probe = _Probe(job, fail)
    session = LLMSession({"optimizer": probe}, budget=Budget(BudgetConfig(llm_calls=10)))
    session.journal = job.open_spend_journal(durable=True)
    return session, probe, job


def test_a_call_is_charged_before_it_is_sent_and_settled_with_its_usage(tmp_path: Path) -> None:
    session, probe, job = _session(tmp_path)
    response = session.chat("optimizer", MESSAGES)
    assert probe.seen[0]["llm_calls"] == 1, "a kill while the request is out still charges it"
    assert probe.seen[0]["tokens"] > 0
    spent = job.read_spend()
    assert spent == {"llm_calls": 1, "tokens": response.usage.total_tokens, "usd": 0.0}
    assert spent["llm_calls"] == session.budget_spent()["llm_calls"]


def test_failed_and_measured_calls_are_not_charged(tmp_path: Path) -> None:
    session, _, job = _session(tmp_path, fail=True)
    with pytest.raises(LLMError):
        session.chat("optimizer", MESSAGES)
    with session.measuring(), pytest.raises(LLMError):
        session.chat("optimizer", MESSAGES)
    assert job.read_spend() == {"llm_calls": 0, "tokens": 0, "usd": 0.0}


def test_a_torn_last_line_is_skipped(tmp_path: Path) -> None:
    job = JobStore(tmp_path / "job")
    journal = job.open_spend_journal(durable=False)
    first = journal.sent(7)
    journal.settled(first, llm_calls=1, tokens=30, usd=0.5)
    journal.sent(9)
    journal.close()
    with open(job.spend_path, "a") as handle:
        handle.write('{"call": 2, "event": "sett')
    assert job.read_spend() == {"llm_calls": 2, "tokens": 39, "usd": 0.5}
    assert JobStore(tmp_path / "none").read_spend() is None

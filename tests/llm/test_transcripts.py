"""Transcripts: every LLM call's messages and answers in the job's ``artifacts/transcript.jsonl``.

One small real-mode run against the fake provider (which echoes the key into its answers) serves
the end-to-end checks; the bounds, the gateway's callers and the calls that were never answered are
checked in-process on a session with a transcript.
"""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import only_run_dir, run_cli
from tests.waiting import PATIENCE_S
from trace_bench._util.masking import register_secret
from trace_bench.llm.attempts import current_ledger
from trace_bench.llm.backend import StubBackend
from trace_bench.llm.budget import Budget
from trace_bench.llm.errors import LLMTimeoutError
from trace_bench.llm.fake_server import FakeLLMServer
from trace_bench.llm.gateway import start_gateway
from trace_bench.llm.session import LLMSession
from trace_bench.llm.stub import StubPolicy
from trace_bench.llm.types import Completion, Usage
from trace_bench.store.job_store import JobStore
from trace_bench.store.models import LLMCall, TranscriptEntry

KEY = "sk-transcript" + "Z9y8X7w6V5u4T3s2R1q0"
MESSAGES = [{"role": "system", "content": "You are terse."}, {"role": "user", "content": "Say a number."}]


@pytest.fixture(scope="module")
def real_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One real-mode PrioritySearch job (2 steps) on a code task, on the fake provider, which writes
    the key it was sent into every proposal (as a provider that echoes credentials would)."""
    root = tmp_path_factory.mktemp("transcripts")
    with FakeLLMServer(api_key=KEY, echo_key=True) as server:
        config = root / "c.yaml"
        config.write_text(f"""
mode: real
tasks: [internal:code_param]
trainers: [{{id: PrioritySearch, ps_steps: 2}}]
seeds: [1]
llm: {{base_url: "{server.url}", model: fake-model, api_key_env: FAKE_LLM_KEY}}
""")
        run_cli("run", "--config", str(config), "--runs-dir", str(root / "runs"), "--quiet", check=True,
                env={"FAKE_LLM_KEY": KEY})
    return only_run_dir(root / "runs")


def _job(run: Path) -> JobStore:
    (job,) = (run / "jobs").iterdir()
    return JobStore(job)


def test_a_real_job_keeps_every_call_with_its_step_and_no_key(real_run: Path) -> None:
    job = _job(real_run)
    entries = job.read_transcript()
    calls = [e for e in job.events() if isinstance(e, LLMCall)]
    assert len(entries) == len(calls) > 0, "one entry per metered call"
    assert [e.call for e in entries] == sorted(e.call for e in entries)
    assert {(e.role, e.phase) for e in entries} == {("optimizer", "train")}
    steps = {line.step for line in job.read_state_history() if line.kind == "step"}
    assert {e.step for e in entries} == steps == {1, 2}, "each call names the step its state was reported at"
    first = entries[0]
    assert [m.role for m in first.messages] == ["system", "user"] and "#Variables" in first.messages[0].content
    assert first.answers and all('"suggestion"' in answer for answer in first.answers)
    assert (first.prompt_tokens, first.completion_tokens) == (calls[0].prompt_tokens, calls[0].completion_tokens)
    assert first.model == calls[0].model and len(first.request) == 16
    text = job.transcript_path.read_text(encoding="utf-8")
    assert "# seen: key=***" in text and KEY not in text and KEY[3:] not in text, "the echoed key is masked"


def test_transcripts_false_keeps_none(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text("mode: stub\ntasks: [internal:numeric_param]\n"
                      "trainers: [{id: PrioritySearch, ps_steps: 1, ps_batches: 1}]\nseeds: [1]\n")
    run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet",
            "--set", "llm.transcripts=false", check=True)
    job = _job(only_run_dir(tmp_path / "runs"))
    assert any(isinstance(e, LLMCall) for e in job.events()), "the job made calls"
    assert not job.transcript_path.exists()


def _stub_session(tmp_path: Path, **bounds: Any) -> tuple[LLMSession, JobStore]:
    session = LLMSession({"optimizer": StubBackend(StubPolicy(seed=1))}, budget=Budget())
    session.offline = True
    job = JobStore(tmp_path / "job")
    session.transcript = job.open_transcript(**bounds)
    return session, job


def test_long_texts_keep_head_and_tail_and_a_full_file_keeps_only_figures(tmp_path: Path) -> None:
    session, job = _stub_session(tmp_path, max_chars=100, max_mb=0.002)
    register_secret("sesame-" + "0123456789abcdef")
    long = "A" * 80 + "sesame-" + "0123456789abcdef" + "B" * 900 + "THE END"
    session.at_step(3)
    for _ in range(8):
        session.chat("optimizer", [{"role": "user", "content": long}])
    session.transcript.close()  # type: ignore[union-attr]
    entries = job.read_transcript()
    assert len(entries) == 8 and all(e.step == 3 for e in entries)
    shown = entries[0].messages[0].content
    assert shown.startswith("A" * 50) and shown.endswith("THE END") and "trace-bench cut" in shown
    masked = len(long.replace("sesame-0123456789abcdef", "***"))
    assert f"cut {masked - 100:,} of {masked:,} characters" in shown and entries[0].cut_chars >= masked - 100
    assert "0123456789abcdef" not in job.transcript_path.read_text(encoding="utf-8")
    full = [e for e in entries if e.omitted]
    assert full and all(not e.messages and not e.answers and e.prompt_tokens > 0 for e in full)
    assert "transcript_max_mb" in (full[0].omitted or "")
    assert job.transcript_path.stat().st_size < 0.002 * 2**20 + len(full) * 600


def test_gateway_calls_carry_their_role_and_caller(tmp_path: Path) -> None:
    import urllib.request

    session, job = _stub_session(tmp_path)
    with start_gateway(session, caller="evaluator") as gateway:
        body = json.dumps({"model": "trace-bench-judge", "messages": MESSAGES}).encode()
        request = urllib.request.Request(f"{gateway.base_url}/chat/completions", data=body, method="POST",
                                         headers={"Authorization": f"Bearer {gateway.api_key}",
                                                  "Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=PATIENCE_S) as response:  # noqa: S310 - loopback
            answer = json.loads(response.read())["choices"][0]["message"]["content"]
    session.transcript.close()  # type: ignore[union-attr]
    (entry,) = job.read_transcript()
    assert (entry.role, entry.caller, entry.phase) == ("judge", "evaluator", "train")
    assert [m.content for m in entry.messages] == [m["content"] for m in MESSAGES] and entry.answers == [answer]


class _TimesOut(StubBackend):
    """A provider that receives the request and never answers: the attempt is charged, then the
    call fails."""

    def complete(self, messages: list[dict[str, Any]], **kwargs: Any) -> Completion:
        ledger = current_ledger()
        assert ledger is not None
        ledger.charged(Completion([], Usage(12, 34, 46), self.model, estimated=True, unanswered="timed_out"))
        raise LLMTimeoutError("no answer within 1 s")


class _Blocking(StubBackend):
    def __init__(self) -> None:
        super().__init__(StubPolicy(seed=1), model="m")
        self.entered, self.release = threading.Event(), threading.Event()

    def complete(self, messages: list[dict[str, Any]], **kwargs: Any) -> Completion:
        self.entered.set()
        self.release.wait(timeout=PATIENCE_S)
        return super().complete(messages, **kwargs)


def test_calls_never_answered_say_so(tmp_path: Path) -> None:
    blocking = _Blocking()
    session = LLMSession({"optimizer": _TimesOut(StubPolicy(seed=1)), "agent": blocking}, budget=Budget())
    job = JobStore(tmp_path / "job")
    session.transcript = job.open_transcript()
    with pytest.raises(LLMTimeoutError):
        session.chat("optimizer", MESSAGES)
    thread = threading.Thread(target=session.chat, args=("agent", MESSAGES), kwargs={"max_tokens": 50})
    thread.start()
    assert blocking.entered.wait(PATIENCE_S)
    assert session.charge_cut_off() == 1
    blocking.release.set()
    thread.join(PATIENCE_S)
    session.transcript.close()
    charged, failed, cut = job.read_transcript()
    assert (charged.call, charged.unanswered, charged.answers, charged.estimated) == (1, "timed_out", [], True)
    assert (failed.call, failed.answers) == (1, []) and "LLMTimeoutError: no answer" in (failed.error or "")
    assert (cut.call, cut.role, cut.unanswered, cut.completion_tokens) == (2, "agent", "cut_off", 50)
    assert all(isinstance(entry, TranscriptEntry) and entry.messages for entry in (charged, failed, cut))

"""Budgets are exact under concurrency, phases keep the harness's measurements apart, and cache
answers are charged like the calls they replay.

Unit checks drive :class:`LLMSession` with a backend that holds every call until the test has seen
all callers either enter or be refused (no sleeps); job-level checks run real jobs in stub mode and
against the fake OpenAI-compatible server.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest

from tests.trainers.external_jobs import events, run_jobs
from trace_bench.config.models import BudgetConfig
from trace_bench.llm.budget import Budget
from trace_bench.llm.errors import BudgetExhausted
from trace_bench.llm.fake_server import FakeLLMServer
from trace_bench.llm.gateway import start_gateway
from trace_bench.llm.session import LLMSession
from trace_bench.llm.types import Completion, Usage

THREADS = 8


class HeldBackend:
    """Counts the calls that reach it and holds each until ``release`` is set."""

    model = "held"

    def __init__(self) -> None:
        self.entered = 0
        self.release = threading.Event()
        self.changed = threading.Condition()

    def complete(self, messages: list[dict[str, Any]], *, n: int = 1, sample_index: int = 0,
                 **params: Any) -> Completion:
        with self.changed:
            self.entered += 1
            self.changed.notify_all()
        self.release.wait(timeout=60)
        return Completion(texts=["ok"], usage=Usage(20, 5, 25), model=self.model, cost_usd=0.001)


def _concurrent_calls(session: LLMSession, backend: HeldBackend, **params: Any) -> tuple[int, list[BudgetExhausted]]:
    refused: list[BudgetExhausted] = []

    def call(index: int) -> None:
        try:
            session.chat("agent", [{"role": "user", "content": f"question {index}"}], **params)
        except BudgetExhausted as exc:
            with backend.changed:
                refused.append(exc)
                backend.changed.notify_all()

    threads = [threading.Thread(target=call, args=(i,)) for i in range(THREADS)]
    for thread in threads:
        thread.start()
    with backend.changed:  # every caller has either reached the backend or been refused
        assert backend.changed.wait_for(lambda: backend.entered + len(refused) == THREADS, timeout=60)
    backend.release.set()
    for thread in threads:
        thread.join()
    return backend.entered, refused


def test_calls_in_flight_count_against_the_call_budget() -> None:
    backend = HeldBackend()
    session = LLMSession({"optimizer": backend, "agent": backend}, budget=Budget(BudgetConfig(llm_calls=5)))
    entered, refused = _concurrent_calls(session, backend)
    assert entered == 5 and len(refused) == THREADS - 5
    assert session.spent().llm_calls == 5 and session.budget_spent()["llm_calls"] == 5
    assert session.budget.reserved.llm_calls == 0, "every reservation was settled"


def test_calls_in_flight_reserve_their_worst_case() -> None:
    """Each call reserves its prompt's bound plus its completion limit, so only as many start as
    could all cost their worst case within the limit."""
    from trace_bench.llm.tokens import prompt_token_bound

    backend = HeldBackend()
    worst = prompt_token_bound([{"role": "user", "content": "question 0"}]) + 10
    session = LLMSession({"optimizer": backend, "agent": backend}, budget=Budget(BudgetConfig(tokens=3 * worst + worst // 2)))
    entered, refused = _concurrent_calls(session, backend, max_tokens=10)
    assert entered == 3 and len(refused) == THREADS - 3
    assert all(exc.resource == "tokens" and exc.needed == worst for exc in refused)
    assert session.spent().tokens == 25 * entered and session.budget.reserved.tokens == 0


def test_measure_phase_is_metered_apart_and_never_budgeted() -> None:
    backend = HeldBackend()
    backend.release.set()
    recorded: list[dict[str, Any]] = []
    session = LLMSession({"optimizer": backend, "agent": backend}, budget=Budget(BudgetConfig(llm_calls=1)), events=recorded.append)
    with session.measuring():
        for _ in range(3):
            session.chat("agent", [{"role": "user", "content": "score me"}])
    session.chat("optimizer", [{"role": "user", "content": "improve"}])
    with pytest.raises(BudgetExhausted):
        session.chat("optimizer", [{"role": "user", "content": "improve again"}])
    phases = session.totals.by_phase
    assert (phases["measure"].llm_calls, phases["train"].llm_calls, session.totals.llm_calls) == (3, 1, 4)
    assert [e["phase"] for e in recorded] == ["measure"] * 3 + ["train"]


def test_the_phase_follows_the_thread_not_the_session() -> None:
    """A trainer thread calling while another thread measures is still a training call."""
    backend = HeldBackend()
    backend.release.set()
    session = LLMSession({"optimizer": backend, "agent": backend})
    inside, done = threading.Event(), threading.Event()

    def measure() -> None:
        with session.measuring():
            session.chat("agent", [{"role": "user", "content": "measured"}])
            inside.set()
            done.wait(timeout=60)

    thread = threading.Thread(target=measure)
    thread.start()
    assert inside.wait(timeout=60)
    session.chat("optimizer", [{"role": "user", "content": "trainer"}])
    assert session.ambient_phase() == "measure"
    done.set()
    thread.join()
    assert session.totals.by_phase["train"].llm_calls == 1 and session.totals.by_phase["measure"].llm_calls == 1


def test_a_trainer_gateway_meters_train_and_a_task_gateway_follows_the_harness() -> None:
    import json
    import urllib.request

    backend = HeldBackend()
    backend.release.set()
    session = LLMSession({"optimizer": backend, "agent": backend})

    def post(gateway: Any) -> None:
        request = urllib.request.Request(f"{gateway.base_url}/chat/completions", method="POST",
                                         data=json.dumps({"model": "x-agent", "messages": [
                                             {"role": "user", "content": "hi"}]}).encode(),
                                         headers={"Authorization": f"Bearer {gateway.api_key}"})
        with urllib.request.urlopen(request, timeout=60) as response:
            assert response.status == 200

    with start_gateway(session, phase="train") as trainer_gateway, start_gateway(session) as task_gateway:
        with session.measuring():
            post(trainer_gateway)
            post(task_gateway)
        post(task_gateway)
    assert session.totals.by_phase["train"].llm_calls == 2 and session.totals.by_phase["measure"].llm_calls == 1


def test_cache_answers_are_charged_and_counted_apart() -> None:
    backend = HeldBackend()
    backend.release.set()

    def from_cache(backend: Any, messages: Any, **kwargs: Any) -> Completion:
        return Completion(texts=["recorded"], usage=Usage(40, 2, 42), model="held", cached=True, cost_usd=0.5)

    session = LLMSession({"optimizer": backend}, budget=Budget(BudgetConfig(llm_calls=2)), call_wrapper=from_cache)
    session.chat("optimizer", [{"role": "user", "content": "a"}])
    session.chat("optimizer", [{"role": "user", "content": "b"}])
    with pytest.raises(BudgetExhausted):
        session.chat("optimizer", [{"role": "user", "content": "c"}])
    totals = session.totals
    assert (totals.llm_calls, totals.cache_hits, totals.total_tokens, totals.cost_usd) == (2, 2, 84, 1.0)
    assert backend.entered == 0


RG_MINIBATCH = {"id": "MinibatchAlgorithm", "num_steps": 2, "batch_size": 8, "num_threads": THREADS}
RG_TASK = {"id": "reasoning_gym:word_sorting", "eval_kwargs": {"num_train": 8, "num_validate": 4, "num_test": 0}}


def _train_calls(job: Path) -> list[dict[str, Any]]:
    return [e for e in events(job) if e["type"] == "llm_call" and e.get("phase") == "train" and not e.get("error")]


def test_threaded_rollouts_run_and_the_budget_holds(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``num_threads: 8`` rollouts of an LLM agent: no TraceMissingInputsError, and with
    ``llm_calls: 5`` exactly 5 training calls, as the budget_exhausted event and budget_spent say."""
    pytest.importorskip("reasoning_gym")
    free = {"tasks": [RG_TASK], "trainers": [RG_MINIBATCH], "seeds": [1]}
    [(result, _)] = run_jobs(free, tmp_path / "free", monkeypatch)
    assert result.status == "ok", (result.error, result.traceback)
    assert result.n_steps == 2
    limited = {**free, "budget": {"llm_calls": 5}}
    [(result, job)] = run_jobs(limited, tmp_path / "limited", monkeypatch)
    assert result.status == "budget_exhausted", (result.error, result.traceback)
    assert len(_train_calls(job)) == 5 == result.budget_spent["llm_calls"]
    [stop] = [e for e in events(job) if e["type"] == "budget_exhausted"]
    assert stop["spent"] == result.budget_spent["llm_calls"]


def test_threaded_budget_against_the_fake_server(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("reasoning_gym")
    with FakeLLMServer() as server:
        config = {"mode": "real", "tasks": [RG_TASK], "trainers": [RG_MINIBATCH], "seeds": [1],
                  "budget": {"llm_calls": 5},
                  "llm": {"base_url": server.url, "model": "fake-model", "max_retries": 0}}
        [(result, job)] = run_jobs(config, tmp_path, monkeypatch)
        served = server.stats()["ok"]
    assert result.status == "budget_exhausted", (result.error, result.traceback)
    measured = [e for e in events(job) if e["type"] == "llm_call" and e.get("phase") == "measure"]
    assert len(_train_calls(job)) == 5 and served == 5 + len(measured)
    # the job's cost columns are what the budget counts: the trainer's calls and the harness's selection
    # scoring (charged, its part in selection_*); the other measurements are apart
    assert result.llm_calls == 5 and result.measure_llm_calls == len(measured)
    assert 0 < (result.selection_llm_calls or 0) <= 5


def test_gepa_library_calls_stay_within_the_budget(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("gepa")
    pytest.importorskip("reasoning_gym")
    config = {"tasks": [RG_TASK], "seeds": [1], "budget": {"llm_calls": 5},
              "trainers": [{"id": "GEPATrainer", "max_metric_calls": 60, "num_threads": THREADS}]}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch)
    assert result.status == "budget_exhausted", (result.error, result.traceback)
    assert len(_train_calls(job)) <= 5 and result.budget_spent["llm_calls"] <= 5


def _curve_without_time(job: Path) -> list[tuple[str, ...]]:
    import csv

    with open(job / "artifacts" / "curve.csv", encoding="utf-8") as handle:
        return [tuple(v for k, v in row.items() if k != "wall_s") for row in csv.DictReader(handle)]


def test_a_budget_limited_replay_stops_where_its_recording_stopped(tmp_path: Path) -> None:
    """Each run in its own process, as a user runs them (node names restart per process)."""
    import json

    from tests.conftest import only_run_dir, run_cli

    cache = tmp_path / "cache.sqlite"

    def config(url: str, mode: str) -> Path:
        path = tmp_path / f"{mode}.yaml"
        path.write_text(f"""
mode: real
tasks: [internal:numeric_param]
trainers:
  - {{id: PrioritySearch, ps_steps: 50, ps_candidates: 2, ps_proposals: 2}}
seeds: [1]
budget: {{llm_calls: 7}}
llm: {{base_url: "{url}", model: fake-model, max_retries: 0, cache: {mode}, cache_path: "{cache}",
      prices: {{fake-model: {{input_per_mtok: 0.5, output_per_mtok: 1.5}}}}}}
""")
        return path

    with FakeLLMServer() as server:
        url = server.url
        run_cli("run", "--config", str(config(url, "read_write")), "--runs-dir", str(tmp_path / "a"), "--quiet",
                timeout=300)
    run_cli("run", "--config", str(config(url, "replay")), "--runs-dir", str(tmp_path / "b"), "--quiet", timeout=300)
    jobs = [next((only_run_dir(tmp_path / name) / "jobs").iterdir()) for name in ("a", "b")]
    recorded, replayed = (json.loads((job / "results.json").read_text()) for job in jobs)
    assert recorded["status"] == replayed["status"] == "budget_exhausted", replayed["error"]
    keys = ("llm_calls", "total_tokens", "cost_usd", "n_steps", "score_best")
    assert {k: replayed[k] for k in keys} == {k: recorded[k] for k in keys}
    assert replayed["cache_hits"] == replayed["llm_calls"] == 7 and recorded["cache_hits"] == 0
    assert replayed["budget_spent"]["llm_calls"] == recorded["budget_spent"]["llm_calls"] == 7
    assert _curve_without_time(jobs[1]) == _curve_without_time(jobs[0])

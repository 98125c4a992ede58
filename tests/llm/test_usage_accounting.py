"""Small accounting rules: a call that finally failed still counts its retries, and a budget stop's
text states the spend that really stopped the job, calls in flight included.

Before, ``llm_retries`` left out the retries of a failed call, and a thread that hit the budget while
other threads' calls were in flight wrote "llm_calls 4 >= 7" for a job that spent 7."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import USER_TASKS
from tests.trainers.external_jobs import events, run_jobs
from trace_bench.config.models import BudgetConfig
from trace_bench.llm.budget import Budget
from trace_bench.llm.errors import BudgetExhausted, LLMError
from trace_bench.llm.fake_server import FakeLLMServer
from trace_bench.store.models import Spend


def _require(package: str) -> None:
    """Skip without the package, without importing it (textgrad writes ./logs when imported directly;
    the trainer imports it with its log directory set)."""
    import importlib.util

    if importlib.util.find_spec(package) is None:
        pytest.skip(f"{package} is not installed")



def test_a_call_that_finally_failed_counts_its_retries() -> None:
    from trace_bench.llm.factory import build_session

    with FakeLLMServer(error_rate=1.0) as server:
        session = build_session(mode="real", llm={"base_url": server.url, "model": "fake-model", "max_retries": 2},
                                budget={}, seed=0)
        with pytest.raises(LLMError):
            session.client("agent")(messages=[{"role": "user", "content": "hi"}])
        assert server.stats()["requests"] == 3
    assert session.totals.errors == 1 and session.totals.retries == 2
    assert session.totals.by_role["agent"].retries == 2


def test_the_budget_stop_states_the_spend_with_calls_in_flight() -> None:
    budget = Budget(BudgetConfig(llm_calls=7))
    for _ in range(3):
        budget.reserve(Spend(llm_calls=4), 0)  # three calls of other threads in flight
    with pytest.raises(BudgetExhausted) as stopped:
        budget.reserve(Spend(llm_calls=4), 0)
    assert str(stopped.value) == "budget exhausted: llm_calls 7 >= 7"


def test_a_stopped_jobs_error_names_its_settled_spend(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Agent calls run in threads (two examples, two threads); the error text and the event say what
    results.json says was spent."""
    config = {"tasks": ["agent_instruction"], "seeds": [1], "budget": {"llm_calls": 5},
              "trainers": [{"id": "BasicSearchAlgorithm", "num_steps": 50, "num_proposals": 3, "num_threads": 2}]}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch, root=USER_TASKS)
    assert result.status == "budget_exhausted"
    spent = result.budget_spent["llm_calls"]
    assert result.error == f"budget exhausted: llm_calls {spent:g} >= 5"
    [stop] = [e for e in events(job) if e["type"] == "budget_exhausted"]
    assert stop["spent"] == spent


@pytest.mark.parametrize(("trainer", "optimizer"), [
    ({"id": "MinibatchAlgorithm", "num_steps": 1}, "OptoPrime"),
    ({"id": "MinibatchAlgorithm", "num_steps": 1, "optimizer": "TextGrad"}, "TextGrad"),
    ({"id": "NoOpTrainer"}, ""),
    ({"id": "TextGradTrainer", "num_steps": 1}, ""),
    ({"id": "GEPATrainer", "max_metric_calls": 4}, ""),
    ({"id": "OpenEvolveTrainer", "iterations": 1}, ""),
])
def test_the_optimizer_column_names_only_an_optimizer_the_job_used(trainer: dict[str, object], optimizer: str,
                                                                    tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """An external library's trainer uses its own update rule, not OptoPrime (the column said OptoPrime)."""
    from tests.trainers.external_jobs import expand
    from trace_bench.runner.manifest import manifest_entry

    extra = {"TextGradTrainer": "textgrad", "GEPATrainer": "gepa", "OpenEvolveTrainer": "openevolve"}
    if trainer["id"] in extra:
        _require(str(extra[str(trainer["id"])]))
    config = {"tasks": ["internal:numeric_param"], "trainers": [trainer], "seeds": [1]}
    [spec] = expand(config)
    assert spec.columns()["optimizer"] == optimizer  # the results.csv column
    assert manifest_entry(spec).resolved.optimizer == (optimizer or None)
    [(result, _)] = run_jobs(config, tmp_path, monkeypatch)
    assert result.status == "ok", result.error
    assert result.optimizer == optimizer and (result.resolved_optimizer or "") == optimizer

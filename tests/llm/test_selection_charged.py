"""Nothing uncounted moves a score (issue 37, point 2): the harness's scoring of reported states on
the selection split (what picks the best state) is charged to the job's budget and cost, apart in
``selection_*``; only the test split's scoring stays outside the budget (``measure_*``).  The
provider's own request count equals what the job charges."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.trainers.external_jobs import run_jobs
from trace_bench.llm.fake_server import FakeLLMServer

KEY = "sk-selection-" + "k" * 24
#: the paper config's reasoning_gym arm (configs/paper_optoprime_vs_textgrad.yaml), one seed: its agent
#: answers every rollout with an LLM call, so scoring a state on the selection split costs calls
PAPER_ARM = {"tasks": [{"id": "reasoning_gym:gsm_symbolic", "eval_kwargs": {"num_train": 3, "num_validate": 2,
                                                                            "num_test": 4}}],
             "trainers": [{"id": "MinibatchAlgorithm", "optimizer": "OptoPrime",
                           "params_variants": [{"num_steps": 2, "batch_size": 1}]}], "seeds": [1]}


def test_the_provider_count_equals_the_charged_calls_and_the_budget_counts_selection(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FAKE_LLM_KEY", KEY)
    with FakeLLMServer(api_key=KEY, seed=5) as server:
        config = {**PAPER_ARM, "mode": "real", "budget": {"llm_calls": 9},
                  "llm": {"base_url": server.url, "model": "fake-model", "api_key_env": "FAKE_LLM_KEY",
                          "max_retries": 0}}
        [(result, _)] = run_jobs(config, tmp_path, monkeypatch)
        served = server.stats()["requests"]
    assert result.selection_llm_calls is not None and result.selection_llm_calls > 0, result
    assert result.llm_calls <= 9, "selection is charged to the budget"
    assert result.budget_spent["llm_calls"] == result.llm_calls
    assert result.llm_errors == 0
    assert served == result.llm_calls + (result.measure_llm_calls or 0)
    trainer_calls = result.usage_by_role["optimizer"].llm_calls
    assert result.selection_llm_calls <= result.llm_calls - trainer_calls

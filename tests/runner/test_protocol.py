"""The evaluation protocol of one job: its cost is what budgets count (the trainer's spend and the
harness's selection scoring, its part in ``selection_*``), the test split's scoring is recorded apart, and a task with a test split reports the held-out score
of both the last iterate and the best state."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.trainers.external_jobs import curve_rows, events, run_jobs

TASK = {"id": "reasoning_gym:word_sorting", "eval_kwargs": {"num_train": 3, "num_validate": 2, "num_test": 3}}


@pytest.fixture(scope="module")
def job(tmp_path_factory: pytest.TempPathFactory) -> tuple[object, Path]:
    pytest.importorskip("reasoning_gym")
    monkeypatch = pytest.MonkeyPatch()
    try:
        config = {"tasks": [TASK], "seeds": [2],
                  "trainers": [{"id": "MinibatchAlgorithm", "optimizer": "OptoPrime",
                                "params_variants": [{"num_steps": 2}]}]}
        [done] = run_jobs(config, tmp_path_factory.mktemp("protocol"), monkeypatch)
    finally:
        monkeypatch.undo()
    return done


def test_cost_columns_are_what_the_budget_counts_and_test_scoring_is_apart(job: tuple[object, Path]) -> None:
    result, job_dir = job
    assert result.status == "ok", (result.error, result.traceback)  # type: ignore[attr-defined]
    calls = [e for e in events(job_dir) if e["type"] == "llm_call" and not e.get("error")]
    train = [e for e in calls if e["phase"] == "train"]
    measure = [e for e in calls if e["phase"] == "measure"]
    assert train and measure, "the agent is called both by the trainer and by the harness's scoring"
    assert result.llm_calls == len(train) == result.budget_spent["llm_calls"]  # type: ignore[attr-defined]
    assert result.total_tokens == sum(e["total_tokens"] for e in train)  # type: ignore[attr-defined]
    assert result.measure_llm_calls == len(measure)  # type: ignore[attr-defined]
    assert result.measure_tokens == sum(e["total_tokens"] for e in measure)  # type: ignore[attr-defined]
    selection = [e for e in train if e.get("caller") == "selection"]
    assert result.selection_llm_calls == len(selection) > 0  # type: ignore[attr-defined]
    assert result.selection_tokens == sum(e["total_tokens"] for e in selection)  # type: ignore[attr-defined]
    rows = curve_rows(job_dir)
    assert int(rows[0]["llm_calls"]) > 0, "the initial state's selection scoring is charged"
    assert rows[0]["measure_llm_calls"] == "0", "nothing uncharged before training"
    assert int(rows[-1]["llm_calls"]) <= len(train) and int(rows[-1]["llm_calls"]) > 0
    assert int(rows[-1]["measure_llm_calls"]) <= len(measure)


def test_held_out_scores_of_the_last_iterate_and_the_best_state(job: tuple[object, Path]) -> None:
    result, _ = job
    assert result.score_test_last is not None and result.score_test_best is not None  # type: ignore[attr-defined]
    assert result.score_test == result.score_test_best  # type: ignore[attr-defined]

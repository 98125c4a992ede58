"""GEPATrainer: the gepa library's reflective evolution over candidates {parameter name: text}."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.trainers.external_jobs import assert_no_leaks, assert_ok_with_curve, run_jobs


def test_stub_matrix(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_before = dict(os.environ)
    config = {"tasks": ["trace_examples:greeting_stub", "internal:numeric_param"],
              "trainers": [{"id": "GEPATrainer", "max_metric_calls": 24}], "seeds": [1, 2]}
    done = run_jobs(config, tmp_path, monkeypatch)
    for result, job in done:
        assert_ok_with_curve(result, job)
    assert sum(r.score_best > r.score_initial for r, _ in done) >= 3
    assert_no_leaks(env_before)


def test_components_restrict_what_evolves(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = {"tasks": ["trace_examples:greeting_stub"], "seeds": [1],
              "trainers": [{"id": "GEPATrainer", "max_metric_calls": 12, "components": ["compose_typo"]}]}
    [(result, _)] = run_jobs(config, tmp_path, monkeypatch)
    assert result.status == "failed" and "unknown components ['compose_typo']" in result.error
    assert "greeting" in result.error and "compose" in result.error


def test_a_budget_stop_ends_the_trainer_cleanly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = {"tasks": ["internal:numeric_param"], "trainers": [{"id": "GEPATrainer", "max_metric_calls": 200}], "seeds": [1],
              "budget": {"llm_calls": 2}}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch)
    assert result.status == "budget_exhausted", (result.error, result.traceback)
    assert result.llm_calls <= 2 and (job / "artifacts" / "best_state.yaml").is_file()

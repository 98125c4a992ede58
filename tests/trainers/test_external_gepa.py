"""GEPATrainer: the gepa library's reflective evolution over candidates {parameter name: text}."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.trainers.external_jobs import assert_no_leaks, assert_ok_with_curve, curve_rows, run_jobs


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


def test_on_a_discovery_folder_gepa_runs_optimize_anything_through_the_gateway_within_budget(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A discovery task's evolve block is one text: gepa's ``optimize_anything`` searches it, every
    reflection goes through the job's metered gateway, and the budget stops it."""
    from tests.conftest import FIXTURES
    from tests.trainers.external_jobs import events
    from trace_bench.trainers.external.gepa_trainer import GEPATrainer

    used: list[str] = []
    original = GEPATrainer._optimize_anything

    def spy(self: GEPATrainer, parameters: list) -> None:  # type: ignore[type-arg]
        used.append(parameters[0].name)
        original(self, parameters)

    monkeypatch.setattr(GEPATrainer, "_optimize_anything", spy)
    config = {"mode": "stub", "tasks": ["discovery:split_numbers"], "seeds": [1], "budget": {"llm_calls": 3},
              "trainers": [{"id": "GEPATrainer", "max_metric_calls": 60}]}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch, root=FIXTURES / "discovery")
    assert used, "the discovery task went through optimize_anything"
    assert result.status in ("ok", "budget_exhausted"), (result.error, result.traceback)
    calls = [e for e in events(job) if e["type"] == "llm_call"]
    assert 0 < result.llm_calls == len(calls) <= 3 and all(e["role"] == "optimizer" for e in calls)
    assert result.sandbox and result.score_trust == "trusted"
    assert int(curve_rows(job)[-1]["llm_calls"]) == result.llm_calls

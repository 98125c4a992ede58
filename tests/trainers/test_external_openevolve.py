"""OpenEvolveTrainer: OpenEvolve's islands, prompts and diffs over the parameters as one program."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.trainers.external_jobs import assert_no_leaks, assert_ok_with_curve, events, run_jobs
from trace_bench.trainers.external.bridge import TextParameter
from trace_bench.trainers.external.openevolve_trainer import parse_program, render_program


def test_program_round_trip() -> None:
    parameters = [TextParameter(0, "greeting", "str", "The greeting word.", "Hi"),
                  TextParameter(1, "compose", "code", "", "def compose(g, n):\n    return g\n")]
    program = render_program(parameters, {"greeting": "Hi", "compose": "def compose(g, n):\n    return g"})
    assert "# EVOLVE-BLOCK-START greeting:str\nHi\n# EVOLVE-BLOCK-END" in program
    assert parse_program(parameters, program) == {"greeting": "Hi", "compose": "def compose(g, n):\n    return g"}
    with pytest.raises(ValueError, match="missing: compose"):
        parse_program(parameters, program.split("# compose")[0])


def test_stub_matrix_on_code_and_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    env_before = dict(os.environ)
    config = {"tasks": ["internal:code_param", "internal:multiobjective_convex"],
              "trainers": [{"id": "OpenEvolveTrainer", "iterations": 4}], "seeds": [1, 2]}
    done = run_jobs(config, tmp_path, monkeypatch)
    for result, job in done:
        assert_ok_with_curve(result, job, min_steps=4)
        assert sum(e["type"] == "step" for e in events(job)) == result.n_steps
    assert sum(r.score_best > r.score_initial for r, _ in done) >= 3
    assert_no_leaks(env_before)


def test_full_rewrite_mode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = {"tasks": ["internal:numeric_param"], "seeds": [1],
              "trainers": [{"id": "OpenEvolveTrainer", "iterations": 3, "diff_based": False}]}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch)
    assert_ok_with_curve(result, job, min_steps=3)
    assert result.score_best > result.score_initial


def test_a_budget_stop_ends_the_trainer_cleanly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = {"tasks": ["internal:numeric_param"], "trainers": [{"id": "OpenEvolveTrainer", "iterations": 30}], "seeds": [1],
              "budget": {"llm_calls": 2}}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch)
    assert result.status == "budget_exhausted", (result.error, result.traceback)
    assert result.llm_calls <= 2 and (job / "artifacts" / "best_state.yaml").is_file()

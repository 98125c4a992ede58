"""The curve is the record: every job's curve reaches its total trainer-phase spend, and its best
score is the best its curve shows.  A budget stop never credits the trainer with parameters it left
mid-iteration: the harness's measurement of them is shown (row ``harness_final``, ``score_final``,
``score_test_last``) but never becomes ``score_best``, ``best_state`` or ``score_test_best``.

Before, curves stopped at the last reported step (a PrioritySearch job that spent 4 calls had a
curve ending at 0), and the left-over parameters' score could become the job's best."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest
import yaml

from tests.conftest import only_run_dir, run_cli
from tests.trainers.external_jobs import curve_rows, run_jobs

RIGHT = "def transform(self, x):\n    return 2 * x + 1\n"


def test_a_budget_stop_never_credits_the_parameters_the_trainer_left(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A trainer that installs a state (here: the right program) and is stopped by its budget before
    it validates or reports it: the job's best stays the best state the trainer reported."""
    from trace_bench.llm.errors import BudgetExhausted
    from trace_bench.trainers.opto_search.minibatch import MinibatchAlgorithm

    def stopped_mid_iteration(self: MinibatchAlgorithm) -> None:
        state = self.ctx.current_state()
        state[0] = RIGHT
        self.ctx.apply(state)  # proposed, not yet validated
        raise BudgetExhausted("llm_calls", 4, 4)

    monkeypatch.setattr(MinibatchAlgorithm, "train", stopped_mid_iteration)
    config = {"tasks": ["internal:code_param"], "trainers": [{"id": "MinibatchAlgorithm", "num_steps": 3}],
              "seeds": [1]}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch)
    assert result.status == "budget_exhausted"
    assert result.score_initial == 0.0 and result.score_final == 1.0  # the harness measured what was left
    assert result.score_best == 0.0 and result.score_test_best == 0.0, "the unvalidated state is not credited"
    assert result.score_test_last == 1.0  # labelled as the last iterate's, not the trainer's best
    rows = curve_rows(job)
    assert [r["kind"] for r in rows] == ["initial", "harness_final"]
    assert float(rows[-1]["score"]) == 1.0 and float(rows[-1]["best_score"]) == 0.0
    best = yaml.safe_load((job / "artifacts" / "best_state.yaml").read_text())
    assert best["score"] == 0.0 and "2 * x + 1" not in json.dumps(best)


def test_a_normally_finished_trainer_is_credited_with_its_final_state(tmp_path: Path,
                                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from trace_bench.trainers.opto_search.minibatch import MinibatchAlgorithm

    def ends_on_the_right_program(self: MinibatchAlgorithm) -> None:
        state = self.ctx.current_state()
        state[0] = RIGHT
        self.ctx.apply(state)

    monkeypatch.setattr(MinibatchAlgorithm, "train", ends_on_the_right_program)
    config = {"tasks": ["internal:code_param"], "trainers": [{"id": "MinibatchAlgorithm", "num_steps": 3}],
              "seeds": [1]}
    [(result, job)] = run_jobs(config, tmp_path, monkeypatch)
    assert result.status == "ok" and result.score_best == 1.0 and result.score_test_best == 1.0
    assert [r["kind"] for r in curve_rows(job)] == ["initial", "final"]


def _curve_and_record(run: Path) -> list[tuple[dict[str, str], list[dict[str, str]]]]:
    with open(run / "results.csv", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle))
    return [(row, curve_rows(run / "jobs" / row["job_id"])) for row in rows]


def test_every_budget_stopped_curve_reaches_the_jobs_spend_and_shows_its_best(tmp_path: Path) -> None:
    """PrioritySearch on code_param spends its 4 calls proposing and reports nothing after the
    initial state; its curve still reaches the 4 calls, so anytime plots and the AUC's budget see the
    spend results.csv reports."""
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [internal:code_param]\nseeds: [1, 2]\nbudget: {llm_calls: 4}\nmax_workers: 2\n"
                      "trainers:\n  - id: PrioritySearch\n    ps_steps: 50\n  - id: GEPA-Base\n")
    run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet", check=True)
    run = only_run_dir(tmp_path / "runs")
    pairs = _curve_and_record(run)
    assert len(pairs) == 4
    for row, curve in pairs:
        assert row["status"] == "budget_exhausted"
        last = curve[-1]
        assert (int(last["llm_calls"]), int(last["tokens"])) == (int(row["llm_calls"]), int(row["total_tokens"])) \
            and int(row["llm_calls"]) == 4, f"{row['trainer']}: the curve stops short of the job's spend"
        assert last["kind"] == "harness_final"
        bests = [float(r["best_score"]) for r in curve if r["best_score"]]
        assert float(row["score_best"]) == max(bests)
    from trace_bench.analysis import load_runs
    from trace_bench.analysis.curves import job_auc

    auc = job_auc(load_runs(run).curves, "llm_calls")
    assert set(auc["budget"]) == {4.0}, "the AUC's budget is the spend the jobs reached"

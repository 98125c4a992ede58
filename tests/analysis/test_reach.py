"""Cost to reach (trace_bench.analysis.reach): the spend at which each job's best-so-far curve first reaches
a fraction of the best known value, per arm the share of its jobs that did and their median spend."""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest

from trace_bench.analysis.reach import job_reach, reach_cell, reach_columns, reach_table

COLUMNS = ["step", "wall_s", "n_evals", "llm_calls", "tokens", "usd", "score", "best_score", "kind"]


def _frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    jobs = pd.DataFrame([
        {"run_id": "r", "job_id": "a1", "task": "t", "trainer": "A", "params_label": "p", "seed": 1, "status": "ok",
         "best_known_score": 1.0},
        {"run_id": "r", "job_id": "a2", "task": "t", "trainer": "A", "params_label": "p", "seed": 2, "status": "ok",
         "best_known_score": 1.0},
        {"run_id": "r", "job_id": "a3", "task": "t", "trainer": "A", "params_label": "p", "seed": 3, "status": "failed",
         "best_known_score": 1.0},
        {"run_id": "r", "job_id": "n1", "task": "u", "trainer": "A", "params_label": "p", "seed": 1, "status": "ok",
         "best_known_score": math.nan},
    ])
    rows = []
    for job, points in {
        "a1": [(0, 0.0, 0, 0, 0, 0.5), (1, 1.0, 2, 3, 300, 0.95), (2, 2.0, 5, 6, 600, 1.0)],
        "a2": [(0, 0.0, 0, 0, 0, 0.5), (1, 3.0, 4, 5, 500, 0.991), (2, 4.0, 8, 9, 900, 0.992)],
        "a3": [(0, 0.0, 0, 0, 0, 0.5)],
        "n1": [(0, 0.0, 0, 0, 0, 7.0)],
    }.items():
        trainer = "A"
        task = "u" if job == "n1" else "t"
        for step, wall, evals, calls, tokens, score in points:
            rows.append({"run_id": "r", "job_id": job, "task": task, "trainer": trainer, "params_label": "p",
                         "seed": 1, "status": "ok", "step": step, "wall_s": wall, "n_evals": evals, "llm_calls": calls,
                         "tokens": tokens, "usd": 0.0, "score": score, "best_score": score,
                         "kind": "initial" if step == 0 else "step"})
    return jobs, pd.DataFrame(rows)


def test_each_job_is_read_at_the_first_point_that_reaches_each_target() -> None:
    jobs, curves = _frames()
    per_job = job_reach(jobs, curves).set_index(["job_id", "target"])
    assert set(per_job.index.get_level_values(0)) == {"a1", "a2", "a3"}, "no best known value: no reach"
    assert per_job.loc[("a1", 0.9), "n_evals"] == 2 and per_job.loc[("a1", 1.0), "tokens"] == 600
    assert bool(per_job.loc[("a2", 0.99), "reached"]) and per_job.loc[("a2", 0.99), "llm_calls"] == 5
    assert not per_job.loc[("a2", 1.0), "reached"] and math.isnan(per_job.loc[("a2", 1.0), "wall_s"])
    assert not per_job.loc[("a3", 0.9), "reached"], "a failed job counts, and did not reach it"


def test_per_arm_the_share_of_jobs_that_reached_it_and_their_median_spend() -> None:
    jobs, curves = _frames()
    table = reach_table(jobs, curves).set_index("target")
    assert table.loc[0.9, ["reached", "jobs"]].tolist() == [2, 3]
    assert table.loc[0.9, "n_evals"] == pytest.approx(3.0) and table.loc[0.9, "wall_s"] == pytest.approx(2.0)
    assert table.loc[1.0, ["reached", "jobs"]].tolist() == [1, 3] and table.loc[1.0, "tokens"] == 600
    assert reach_cell(table.loc[0.9]) == "2/3 · 3 evaluations · 400 tokens · 2 s"
    assert list(reach_columns(table.reset_index()).columns) == ["task", "trainer", "params_label", "reach_100",
                                                                "reach_90", "reach_99"]


def test_a_run_without_best_known_values_has_no_reach() -> None:
    jobs, curves = _frames()
    jobs["best_known_score"] = math.nan
    assert reach_table(jobs, curves).empty and reach_table(jobs.drop(columns="best_known_score"), curves).empty


def test_the_table_the_report_and_the_ui_show_the_cost_to_reach_with_the_share_of_seeds(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Arm A's two seeds end at 100 % and 95 % of the best known value, arm B's at 60 %: every view says
    how many seeds reached each target and what it cost them, from the run's own files; the report shows
    both yardsticks (% of the best known value and % of AlphaEvolve's)."""
    from tests.analysis.runs_kit import job, make_run
    from trace_bench.analysis.report import write_report
    from trace_bench.analysis.table import table_main
    from trace_bench.ui.plots import reach_html as ui_reach_html

    task = "discovery:circle_packing_26"
    yardsticks = {"best_known": 2.63598308, "best_known_score": 1.0}
    run = make_run(tmp_path, "reach-run", [
        job(task, "A", 1, 1.0, pct_of_best_known=100.0, pct_of_alphaevolve=100.25, **yardsticks),
        job(task, "A", 2, 0.95, pct_of_best_known=95.0, pct_of_alphaevolve=95.25, **yardsticks),
        job(task, "B", 1, 0.6, pct_of_best_known=60.0, pct_of_alphaevolve=60.25, **yardsticks),
        job(task, "B", 2, 0.6, pct_of_best_known=60.0, pct_of_alphaevolve=60.25, **yardsticks)])
    assert table_main([str(run)]) == 0
    table = capsys.readouterr().out
    header = next(line.split("|") for line in table.splitlines() if line.startswith("| task"))
    row_a = next(line.split("|") for line in table.splitlines() if "| A " in line)
    row_b = next(line.split("|") for line in table.splitlines() if "| B " in line)
    cell = {name.strip(): index for index, name in enumerate(header)}
    # the curves climb in three steps of 2 LLM calls; A's seeds reach 90 % at their last point (evaluation 4)
    assert row_a[cell["to 90 %"]].strip().startswith("2/2 · 4 evaluations · ")
    assert row_a[cell["to 100 %"]].strip().startswith("1/2 · ") and row_b[cell["to 90 %"]].strip() == "0/2"
    report = write_report(run).read_text(encoding="utf-8")
    leaderboard = report[report.index('id="leaderboard"'):report.index('id="verdict"')]
    assert "% of AlphaEvolve (mean)" in leaderboard and "97.75" in leaderboard and "2.63598308" in leaderboard
    section = report[report.index('id="reach"'):report.index('id="win-matrix"')]
    ui = ui_reach_html(run)
    for html_text in (section, ui):
        assert "2/2" in html_text and "1/2" in html_text and "0/2" in html_text
        assert "median evaluations" in html_text and "Cost to reach" in html_text

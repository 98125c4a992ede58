"""Scores at equal spend (issue 37, point 3): each arm's anytime curve read at the spend every scored
job of the task reached, at the config's `analysis.at` checkpoints and as the normalized AUC, in
`table`, report.html and `verdict --metric`."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from tests.analysis.runs_kit import job, make_run
from trace_bench.analysis.equal_spend import equal_spend_arms
from trace_bench.analysis.load import load_runs


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two arms of one task over 3 seeds: `cheap` climbs to 0.6 in 6 calls, `dear` to 0.9 in 12 (its
    curve is 0.3 at 4 calls and 0.6 at 8): at the equal spend, 6 calls, `cheap` holds 0.6, `dear` 0.3."""
    root = tmp_path_factory.mktemp("equal")
    jobs = [job("t:a", "cheap", seed, 0.6, calls_per_step=2) for seed in (1, 2, 3)]
    jobs += [job("t:a", "dear", seed, 0.9, calls_per_step=4) for seed in (1, 2, 3)]
    made = make_run(root, "r1", [{k: v for k, v in j.items() if k != "calls_per_step"} for j in jobs[:3]],
                    calls_per_step=2)
    other = make_run(root, "r2", [{k: v for k, v in j.items() if k != "calls_per_step"} for j in jobs[3:]],
                     calls_per_step=4)
    for path in (made, other):  # one run of both arms: the second run's jobs moved into the first
        snapshot = path / "meta" / "config.snapshot.yaml"
        data = yaml.safe_load(snapshot.read_text())
        snapshot.write_text(yaml.safe_dump({**data, "budget": {"llm_calls": 12}, "analysis": {"at": [4]}}))
    return made


def test_each_arm_is_read_where_every_arm_can_be(run: Path) -> None:
    arms = equal_spend_arms(load_runs([run, run.parent / "r2"])).set_index("trainer")
    assert arms.loc["cheap", "equal_spend"] == arms.loc["dear", "equal_spend"] == 6
    assert arms.loc["cheap", "at_equal"] == pytest.approx(0.6)
    assert arms.loc["dear", "at_equal"] == pytest.approx(0.3)
    assert arms.loc["cheap", "at_4"] == pytest.approx(0.4) and arms.loc["dear", "at_4"] == pytest.approx(0.3)
    # AUC over the 12-call budget: cheap holds 0.2, 0.4, 0.6 from calls 2, 4, 6 (units 1-12 credited)
    assert arms.loc["cheap", "auc"] == pytest.approx((0.0 + 0.2 * 2 + 0.4 * 2 + 0.6 * 7) / 12)


def test_table_and_verdict_show_scores_at_equal_spend(run: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from trace_bench.analysis.table import table_main
    from trace_bench.analysis.verdict_output import verdict_main

    runs = [str(run), str(run.parent / "r2")]
    assert table_main(runs) == 0
    table = capsys.readouterr().out
    assert "| at equal spend | at 4 | AUC |" in table
    assert "0.600 @6" in table and "0.300 @6" in table
    assert verdict_main(runs, metric="at_equal") == 0
    verdict = capsys.readouterr().out
    assert "Ranked on at_equal" in verdict
    assert "| t:a | 1 | cheap | best | 0.6 |" in verdict and "| dear | best | 0.3 |" in verdict, verdict
    assert verdict_main(runs, metric="at_x") == 2


def test_the_report_and_the_ui_show_them(run: Path) -> None:
    from trace_bench.analysis.report import build_report
    from trace_bench.ui.plots import equal_spend_section

    page = build_report(load_runs([run, run.parent / "r2"]))
    assert "Scores at equal spend" in page and "equal spend (llm_calls)" in page
    assert "Scores at equal spend" in equal_spend_section(run)

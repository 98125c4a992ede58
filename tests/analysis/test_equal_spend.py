"""Scores at equal spend (issue 37, point 3): each arm's anytime curve read at the spend every scored
job of the task reached, at the config's `analysis.at` checkpoints and as the normalized AUC, in
`table`, report.html and `verdict --metric`."""

from __future__ import annotations

import csv
from collections import defaultdict
from pathlib import Path

import pytest
import yaml

from tests.analysis.conftest import STUB_MATRIX_GROUP
from tests.analysis.runs_kit import job, make_run
from tests.conftest import run_cli
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


def _spent_per_job(run: Path) -> dict[str, list[float]]:
    """Per task, what each scored job of the run spent in LLM calls, from its curve.csv's last point."""
    with open(run / "results.csv", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["status"] in ("ok", "budget_exhausted") and r["score_best"]]
    spent: dict[str, list[float]] = defaultdict(list)
    for row in rows:
        with open(run / "jobs" / row["job_id"] / "artifacts" / "curve.csv", encoding="utf-8") as handle:
            spent[row["task"]].append(max(float(point["llm_calls"]) for point in csv.DictReader(handle)))
    return spent


@STUB_MATRIX_GROUP
def test_trace_bench_table_shows_a_persisted_runs_scores_at_equal_spend(stub_matrix_run: Path) -> None:
    """A run the runner wrote: `trace-bench table` reads every arm of a task at the least spend any of its
    scored jobs reached (NoOpTrainer, which calls no LLM, bounds nothing), never above its final best."""
    markdown = run_cli("table", str(stub_matrix_run), "--metric", "best", check=True).stdout
    table = list(csv.DictReader(run_cli("table", str(stub_matrix_run), "--metric", "best", "--format", "csv",
                                        check=True).stdout.splitlines()))
    header = markdown.splitlines()[0]
    assert header.endswith("| at equal spend | AUC |"), header
    spent = _spent_per_job(stub_matrix_run)
    for row in table:
        equal = min(value for value in spent[row["task"]] if value > 0)
        assert float(row["equal_spend"]) == equal, row
        assert float(row["at_equal"]) <= float(row["mean"]) + 1e-9, row
        line = next(line for line in markdown.splitlines()
                    if line.startswith(f"| {row['task']} |") and f"| {row['trainer']}" in line
                    and (row["params_label"] == "default" or row["params_label"] in line))
        assert f"| {float(row['at_equal']):.3f} @{equal:g} |" in line, line
    noop = [r for r in table if r["trainer"] == "NoOpTrainer"]
    assert noop and all(float(r["at_equal"]) == float(r["mean"]) for r in noop), "no spend: its score at every spend"


def test_analysis_at_is_checked_and_changes_no_job() -> None:
    """`analysis: {at: [...]}` only says how a run is read: two configs that differ in it have one
    config_hash (a resumed run may change it); a spend that is not positive is a config error."""
    from trace_bench._util.errors import ConfigError
    from trace_bench.config.loader import parse_config
    from trace_bench.matrix.identity import config_hash

    base = {"mode": "stub", "tasks": ["internal:numeric_param"], "seeds": [1], "budget": {"llm_calls": 12}}
    read = parse_config({**base, "analysis": {"at": [10, 4, 4]}})
    assert read.analysis.at == [4, 10]
    assert config_hash(read) == config_hash(parse_config(base))
    with pytest.raises(ConfigError, match=r"analysis\.at"):
        parse_config({**base, "analysis": {"at": [0]}})

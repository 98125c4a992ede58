"""leaderboard.csv, the CLI summary and report.html are one leaderboard model (the same rows, column
names and ranks): ties share a rank, an arm whose every job failed is counted failed and unranked,
never scored 0; a task with a test split is ranked on its held-out score in all of them."""

from __future__ import annotations

import csv
from pathlib import Path

from tests.conftest import USER_TASKS, only_run_dir, run_cli

CONFIG = """
mode: stub
seeds: [1, 2]
max_workers: 2
tasks: [internal:numeric_param, loop_forever, internal:code_param]
trainers:
  - {id: NoOpTrainer, params_variants: [{num_steps: 1}, {num_steps: 2}]}
  - {id: PrioritySearch, params_variants: [{ps_steps: 2}]}
"""


def test_csv_summary_and_report_rank_alike(tmp_path: Path) -> None:
    import pandas as pd

    from trace_bench.analysis import load_runs
    from trace_bench.analysis.stats import leaderboard
    from trace_bench.store.models import LEADERBOARD_COLUMNS

    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    proc = run_cli("run", "--config", str(config), "--root", str(USER_TASKS), "--runs-dir", str(tmp_path / "runs"),
                   "--job-timeout", "2", "--quiet", timeout=600)
    assert proc.returncode == 1, proc.stderr  # the looping task's jobs time out
    run = only_run_dir(tmp_path / "runs")
    with open(run / "leaderboard.csv", encoding="utf-8") as handle:
        reader = csv.DictReader(handle)
        board = {(r["task"], r["params_label"]): (r["rank"], int(r["count"]), int(r["failed"]), r["metric"])
                 for r in reader}
        assert tuple(reader.fieldnames or ()) == LEADERBOARD_COLUMNS
    numeric, looping = "internal:numeric_param", "llm4ad:loop_forever"
    assert board[(numeric, "ps_steps=2")][0] == "1"
    assert board[(numeric, "num_steps=1")][0] == board[(numeric, "num_steps=2")][0], "a tie shares a rank"
    for label in ("num_steps=1", "num_steps=2", "ps_steps=2"):
        assert board[(looping, label)][:3] == ("", 0, 2), "every job failed: unranked and counted failed"
        assert board[("internal:code_param", label)][3] == "test_best", "a task with a test split ranks on it"
    report = leaderboard(load_runs(run).jobs)
    assert tuple(report.columns) == LEADERBOARD_COLUMNS, "analysis reads the same model the driver writes"
    from_report = {(r.task, r.params_label): ("" if pd.isna(r.rank) else str(int(r.rank)), int(r.count), int(r.failed),
                                              r.metric) for r in report.itertuples()}
    assert from_report == board
    assert "  mode:        stub (a deterministic stub answered every LLM call" in proc.stdout, "stub mode is said"
    summary = [line for line in proc.stdout.splitlines() if line.startswith(f"  {numeric}")]
    ranks = [board[(numeric, label)][0] for label in ("ps_steps=2", "num_steps=1", "num_steps=2")]
    assert [line.split()[1] for line in summary] == [f"#{rank}" for rank in ranks]
    assert summary[0].endswith(("best, separated from every other arm", "best mean, tied with 2 arm(s)"))
    assert all(("tied with the best (p=" in line or "below the best (p=" in line) for line in summary[1:])

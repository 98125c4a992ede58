"""Rankings never flatter: each (task, eval_kwargs) is its own task, and an arm with failed or
missing seeds ranks after every complete arm of its task, marked ``k/N seeds`` in leaderboard.csv,
the run's summary, ``trace-bench table``, report.html and the UI; paired tests use only seeds both
arms completed and say how many they dropped.

Before, numeric_param under target=3 and target=5 was one task (its four arms ranked 1-4 and paired
across targets, which enlarged the Holm family), and an arm that lost its worse seeds ranked #1."""

from __future__ import annotations

import csv
import re
from pathlib import Path

import pytest

from tests.conftest import only_run_dir, run_cli

# Fails to build for MinibatchAlgorithm's seeds 1 and 2 (the task reads its job's specification), as
# a task whose evaluator breaks on some jobs would: that arm keeps 2 of its 4 seeds.
LOSES_SEEDS = '''
import json
import os

from opto import trace

from trace_bench.tasks.internal.numeric_param import DistanceGuide


def build_trace_problem(**eval_kwargs):
    meta = json.loads(open(os.path.join(os.environ["TRACE_BENCH_JOB_DIR"], "job_meta.json")).read())
    if meta["trainer"] == "MinibatchAlgorithm" and meta["seed"] in (1, 2):
        raise RuntimeError("the evaluator's data file is missing")
    return {"param": trace.node(0.0, name="x", trainable=True), "guide": DistanceGuide(),
            "train_dataset": {"inputs": ["Output the target number."], "infos": [3.0]},
            "optimizer_kwargs": {"objective": "Make the output equal 3."}, "score_range": [None, 0.0]}
'''


def _csv(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture(scope="module")
def lossy_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    root = tmp_path_factory.mktemp("tasks")
    (root / "loses_seeds.py").write_text(LOSES_SEEDS)
    folder = tmp_path_factory.mktemp("lossy")
    config = folder / "c.yaml"
    config.write_text("tasks: [loses_seeds]\nseeds: [1, 2, 3, 4]\nmax_workers: 2\n"
                      "trainers:\n  - id: MinibatchAlgorithm\n    num_steps: 3\n  - NoOpTrainer\n")
    proc = run_cli("run", "--config", str(config), "--root", str(root), "--runs-dir", str(folder / "runs"))
    return only_run_dir(folder / "runs"), proc.stdout


def test_an_arm_that_lost_seeds_ranks_after_the_complete_arm_everywhere(lossy_run: tuple[Path, str]) -> None:
    run, stdout = lossy_run
    board = _csv(run / "leaderboard.csv")
    assert [(r["trainer"], r["rank"], r["count"]) for r in board] == [("NoOpTrainer", "1", "4"),
                                                                       ("MinibatchAlgorithm", "2", "2")]
    assert [(r["trainer"], r["rank"], r["count"], r["planned"], r["complete"]) for r in board] == [
        ("NoOpTrainer", "1", "4", "4", "true"), ("MinibatchAlgorithm", "2", "2", "4", "false")]
    survivors, complete = float(board[1]["mean"]), float(board[0]["mean"])
    assert survivors > complete, "the surviving seeds look better: without the rule the lossy arm ranked #1"
    lines = [line for line in stdout.splitlines() if "llm4ad:loses_seeds  #" in line]
    assert len(lines) == 2 and "NoOpTrainer" in lines[0] and "incomplete: 2/4 seeds" in lines[1]
    table = run_cli("table", str(run), check=True).stdout
    rows = [line for line in table.splitlines() if line.startswith("| llm4ad:loses_seeds")]
    assert "NoOpTrainer" in rows[0] and "| 2/4 |" in rows[1]
    assert "n = k/N: an incomplete arm" in table


def test_the_report_and_the_ui_mark_the_incomplete_arm(lossy_run: tuple[Path, str]) -> None:
    run, _ = lossy_run
    run_cli("report", str(run), check=True)
    html = (run / "report.html").read_text().replace("<wbr>", "")  # break points after commas and colons
    board = html[html.index('id="leaderboard"'):html.index('id="per-task"')]
    assert board.index("NoOpTrainer") < board.index("MinibatchAlgorithm")
    assert re.search(r'<tr class="incomplete"><td>llm4ad:loses_seeds</td><td>2</td><td>MinibatchAlgorithm</td>', board)
    assert "2/4 (incomplete)" in board
    from trace_bench.ui.readers import leaderboard_display, read_leaderboard_rows

    rows, _ = read_leaderboard_rows(run)  # typed by the store
    assert [r["seeds"] for r in leaderboard_display(rows)] == [4, "2/4 seeds, incomplete"]


def test_paired_tests_use_seeds_both_arms_completed_and_count_the_dropped(lossy_run: tuple[Path, str]) -> None:
    from trace_bench.analysis import build_report, load_runs, pairwise_tests, win_matrix

    runs = load_runs(lossy_run[0])
    [test] = pairwise_tests(runs.jobs).to_dict("records")
    assert (test["n"], test["dropped"]) == (2, 2)
    assert set(win_matrix(runs.jobs)["dropped"]) == {2}
    assert "(2 seeds dropped)" in build_report(runs)


@pytest.fixture(scope="module")
def variant_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("variants")
    config = folder / "c.yaml"
    config.write_text("tasks:\n  - id: internal:numeric_param\n    eval_kwargs: {target: 3}\n"
                      "  - id: internal:numeric_param\n    eval_kwargs: {target: 5}\n"
                      "seeds: [1, 2]\nmax_workers: 2\n"
                      "trainers:\n  - id: MinibatchAlgorithm\n    num_steps: 2\n  - NoOpTrainer\n")
    run_cli("run", "--config", str(config), "--runs-dir", str(folder / "runs"), "--quiet", check=True)
    return only_run_dir(folder / "runs")


LABELS = {"internal:numeric_param[target=3]", "internal:numeric_param[target=5]"}


def test_each_eval_kwargs_variant_is_its_own_task(variant_run: Path) -> None:
    board = _csv(variant_run / "leaderboard.csv")
    assert {r["task"] for r in board} == LABELS
    for label in LABELS:  # ranked within the variant: each has its own best arm, and its own verdict on the other
        assert sorted(r["vs_best"] for r in board if r["task"] == label) in (["best", "tied"], ["below", "best"])
    results = _csv(variant_run / "results.csv")
    assert {r["task_label"] for r in results} == LABELS
    assert {r["params_label"] for r in results} == {"default", "num_steps=2"}  # the variant is not in it
    from trace_bench.analysis import load_runs, pairwise_tests

    tests = pairwise_tests(load_runs(variant_run).jobs)
    assert set(tests["task"]) == LABELS and len(tests) == 2, "one pair per variant: a Holm family of 2, not 6"
    table = run_cli("table", str(variant_run), check=True).stdout
    assert all(f"| {label} |" in table for label in LABELS)
    run_cli("report", str(variant_run), check=True)
    html = (variant_run / "report.html").read_text()
    assert all(f"<h3>{label}</h3>" in html for label in LABELS)
    from trace_bench.ui.readers import labelled_results, read_csv_rows

    rows, _ = read_csv_rows(variant_run / "results.csv")
    assert {r["task"] for r in labelled_results(rows)} == LABELS


def test_the_incomplete_arm_is_not_on_the_frontier_of_leaderboard_csv(lossy_run: tuple[Path, str]) -> None:
    """Its two surviving seeds score better than the complete arm for more calls, a trade-off that
    put it on the frontier; it lost half its seeds, so it is not on it (``complete`` false says why)."""
    board = {r["trainer"]: r for r in _csv(lossy_run[0] / "leaderboard.csv")}
    lossy, complete = board["MinibatchAlgorithm"], board["NoOpTrainer"]
    assert float(lossy["mean"]) > float(complete["mean"]) and float(lossy["mean_llm_calls"]) > 0
    assert (lossy["on_frontier"], lossy["complete"]) == ("false", "false")
    assert complete["on_frontier"] == "true"

"""`trace-bench table`: the paper table's numbers recomputed independently from results.csv, its three
formats, the held-out metric and its optimistic fallback, and runs of another LLM kept apart."""

from __future__ import annotations

import csv
import math
import statistics
from collections import defaultdict
from pathlib import Path

import pytest

from tests.analysis.conftest import STUB_MATRIX_GROUP, STUB_MATRIX_SEEDS
from tests.analysis.runs_kit import job, make_run
from tests.conftest import run_cli

pytest.importorskip("pandas")

pytestmark = STUB_MATRIX_GROUP


def _expected(run: Path, preferred: str) -> dict[tuple[str, str, str], dict[str, float]]:
    with open(run / "results.csv", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["status"] in ("ok", "budget_exhausted") and r["score_best"]]
    held_out = {r["task"] for r in rows if r[f"score_{preferred}"]}
    arms: dict[tuple[str, str, str], list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        arms[(row["task"], row["trainer"], row["params_label"])].append(row)
    out = {}
    for arm, members in arms.items():
        column = f"score_{preferred}" if arm[0] in held_out else "score_best"
        values = [float(m[column]) for m in members]
        out[arm] = {"metric": column.removeprefix("score_"), "n": len(values), "mean": statistics.fmean(values),
                    "se": statistics.stdev(values) / math.sqrt(len(values)),
                    "tokens": statistics.fmean(float(m["total_tokens"]) for m in members),
                    "wall_s": statistics.fmean(float(m["time_seconds"]) for m in members)}
    return out


@pytest.mark.parametrize("metric", ["test_last", "test_best", "best"])
def test_csv_numbers_match_results_csv(stub_matrix_run: Path, metric: str) -> None:
    proc = run_cli("table", str(stub_matrix_run), "--metric", metric, "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    table = list(csv.DictReader(proc.stdout.splitlines()))
    expected = _expected(stub_matrix_run, metric)
    assert {(r["task"], r["trainer"], r["params_label"]) for r in table} == set(expected)
    for row in table:
        want = expected[(row["task"], row["trainer"], row["params_label"])]
        assert row["metric"] == want["metric"] and int(row["n"]) == want["n"]
        for column in ("mean", "se", "tokens", "wall_s"):
            assert float(row[column]) == pytest.approx(want[column], rel=1e-6, abs=1e-9), (column, row)
    metrics = {r["task"]: r["metric"] for r in table}
    assert metrics["internal:numeric_param"] == "best", "no test split: the selection split"
    assert metrics["internal:code_param"] == metric, "a test split: the metric asked for"
    by_task = [r for r in table if r["task"] == "internal:code_param"]
    means = [float(r["mean"]) for r in by_task]
    assert means == sorted(means, reverse=True), "arms ordered by mean, best first"


def test_markdown_and_latex_say_what_they_measure(stub_matrix_run: Path) -> None:
    markdown = run_cli("table", str(stub_matrix_run))
    assert markdown.returncode == 0, markdown.stderr
    lines = markdown.stdout.splitlines()
    assert lines[0].startswith("| task | rank | arm | score: mean (SE) | verdict | n |")
    assert "held-out test score of the best state" in markdown.stdout, "the verdict's metric by default"
    assert "| tokens (stub) | USD (stub: 0) |" in lines[0] and "Stub mode: a deterministic stub" in markdown.stdout
    verdicts = [line.split(" | ")[4] for line in lines if line.startswith("| internal:")]
    assert "best" in verdicts and all(v == "best" or v.startswith(("tied (p=", "below (p=")) for v in verdicts)
    assert "optimistic (internal:numeric_param)" in markdown.stdout
    numeric_rows = [line for line in lines if line.startswith("| internal:numeric_param")]
    assert numeric_rows and all(" * |" in line for line in numeric_rows), "fallback rows are marked"
    latex = run_cli("table", str(stub_matrix_run), "--format", "latex", "--metric", "test_best")
    assert latex.returncode == 0, latex.stderr
    assert latex.stdout.startswith("\\begin{table}") and "internal:code\\_param" in latex.stdout
    assert f"\\caption{{Mean (standard error) over {STUB_MATRIX_SEEDS} seeds of the held-out test score of the best state" in latex.stdout


def test_bad_input_exits_2_with_one_line(tmp_path: Path) -> None:
    missing = run_cli("table", str(tmp_path / "nope"))
    assert missing.returncode == 2 and "no such run directory" in missing.stderr
    assert "Traceback" not in missing.stderr
    bad = run_cli("table", str(tmp_path), "--metric", "val")
    assert bad.returncode == 2 and "invalid choice" in bad.stderr


def test_runs_of_another_llm_stay_separate_arms(tmp_path: Path) -> None:
    """Two runs of one arm under different models, on disjoint seeds, are two conditions: pooling
    them would average two models into one row."""
    from trace_bench.analysis import load_runs
    from trace_bench.analysis.table import paper_table

    small = make_run(tmp_path, "small", [job("s:t", "PS", seed, 0.2) for seed in (1, 2)], model="m-small")
    big = make_run(tmp_path, "big", [job("s:t", "PS", seed, 0.8) for seed in (3, 4)], model="m-big")
    rows = paper_table(load_runs([small, big]), "best").rows
    assert sorted(rows["trainer"]) == ["PS @ big", "PS @ small"] and list(rows["n"]) == [2, 2]
    extended = make_run(tmp_path, "more-seeds", [job("s:t", "PS", seed, 0.2) for seed in (3, 4)], model="m-small")
    pooled = paper_table(load_runs([small, extended]), "best").rows
    assert list(pooled["trainer"]) == ["PS"] and list(pooled["n"]) == [4], "same LLM, new seeds: one arm"


def test_the_caption_counts_one_seed_in_the_singular(tmp_path: Path) -> None:
    """It said "over 1 seeds"."""
    from trace_bench.analysis import load_runs
    from trace_bench.analysis.table import paper_table

    one = paper_table(load_runs(make_run(tmp_path, "one", [job("s:t", "PS", 1, 0.5)])), "best").caption()
    assert "over 1 seed of" in one
    two = paper_table(load_runs(make_run(tmp_path, "two", [job("s:t", "PS", s, 0.5) for s in (1, 2)])),
                      "best").caption()
    assert "over 2 seeds of" in two

"""leaderboard.csv recomputed independently from results.csv (the rules of docs/artifacts.md).

Means, sample standard deviations, Student-t 95 % intervals (scipy here, whatever the harness
uses), competition ranks with ties (1, 1, 3), unscored arms last with an empty rank, failed jobs
counted apart (their spend is in the arm's cost per job).  When the leaderboard's arm identity grows (optimizer, models), extend ``ARM``.
"""

from __future__ import annotations

import csv
import math
import statistics
from collections import defaultdict
from pathlib import Path

import pytest

from tests.conftest import only_run_dir, run_cli

stats = pytest.importorskip("scipy.stats")

ARM = ("task", "trainer", "params_label")
SCORED = {"ok", "budget_exhausted"}
# Two NoOpTrainer variants score alike on every seed: a tie.  non_trainable fails for every arm.
# code_param has a test split: it is ranked on the held-out score of the best state, the others on
# the selection split.
CONFIG = """
tasks: [internal:numeric_param, internal:multi_param, internal:non_trainable, internal:code_param]
trainers:
  - id: PrioritySearch
    params_variants: [{ps_steps: 1}, {ps_steps: 3}]
  - id: NoOpTrainer
    params_variants: [{ps_steps: 1}, {ps_steps: 2}]
seeds: [1, 2, 3]
max_workers: 2
"""


def _read(path: Path) -> list[dict[str, str]]:
    with open(path, encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _mean(values: list[float]) -> float | None:
    return statistics.fmean(values) if values else None


def expected_leaderboard(results: list[dict[str, str]]) -> dict[tuple[str, ...], dict[str, object]]:
    arms: dict[tuple[str, ...], list[dict[str, str]]] = defaultdict(list)
    for row in results:
        arms[tuple(row[c] for c in ARM)].append(row)
    def scored(rows: list[dict[str, str]]) -> list[dict[str, str]]:
        return [r for r in rows if r["status"] in SCORED and r["score_best"] != ""]

    held_out = {arm[0] for arm, rows in arms.items() if any(r["score_test_best"] != "" for r in scored(rows))}
    board: dict[tuple[str, ...], dict[str, object]] = {}
    for arm, rows in arms.items():
        ok = scored(rows)
        ran = [r for r in rows if r["status"] != "skipped"]  # the cost per job counts failed jobs too
        ranked_on = "test_best" if arm[0] in held_out else "best"
        values = [float(r[f"score_{ranked_on}"]) for r in ok if r[f"score_{ranked_on}"] != ""]
        n = len(values)
        std = statistics.stdev(values) if n > 1 else None
        half = stats.t.ppf(0.975, n - 1) * std / math.sqrt(n) if std is not None else None
        mean = _mean(values)
        best = [float(r["score_best"]) for r in ok]
        board[arm] = {
            "ranked_on": ranked_on, "count": len(ok), "failed": len(rows) - len(ok), "mean": mean, "std": std,
            "ci95_low": None if half is None or mean is None else mean - half,
            "ci95_high": None if half is None or mean is None else mean + half,
            "mean_best": _mean(best), "std_best": statistics.stdev(best) if len(best) > 1 else None,
            "mean_initial": _mean([float(r["score_initial"]) for r in ok if r["score_initial"] != ""]),
            "mean_test": _mean([float(r["score_test"]) for r in ok if r["score_test"] != ""]),
            "mean_test_last": _mean([float(r["score_test_last"]) for r in ok if r["score_test_last"] != ""]),
            "mean_llm_calls": _mean([float(r["llm_calls"]) for r in ran]),
            "mean_tokens": _mean([float(r["total_tokens"]) for r in ran]),
            "mean_cost_usd": _mean([float(r["cost_usd"]) for r in ran]),
        }
    for task in {arm[0] for arm in board}:
        means = [board[arm]["mean"] for arm in board if arm[0] == task]
        for arm in board:
            if arm[0] == task:
                mean = board[arm]["mean"]
                board[arm]["rank"] = None if mean is None else 1 + sum(m is not None and m > mean for m in means)
    return board


def _value(text: str) -> float | None:
    return None if text == "" else float(text)


def test_leaderboard_matches_an_independent_computation(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    proc = run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet")
    assert proc.returncode == 1  # the non_trainable jobs fail
    run = only_run_dir(tmp_path / "runs")
    expected = expected_leaderboard(_read(run / "results.csv"))
    board = _read(run / "leaderboard.csv")
    assert sorted(tuple(r[c] for c in ARM) for r in board) == sorted(expected)
    for row in board:
        want = expected[tuple(row[c] for c in ARM)]
        assert int(row["count"]) == want["count"] and int(row["failed"]) == want["failed"], row
        assert _value(row["rank"]) == want["rank"], row
        assert row["ranked_on"] == want["ranked_on"], row
        for column in ("mean", "std", "mean_best", "std_best", "ci95_low", "ci95_high", "mean_initial", "mean_test",
                       "mean_test_last",
                       "mean_llm_calls", "mean_tokens", "mean_cost_usd"):
            got, wanted = _value(row[column]), want[column]
            assert (got is None and wanted is None) or got == pytest.approx(wanted, rel=1e-6, abs=1e-6), (column, row)
    # the matrix really has what the rules are about: a spread, a tie, arms with no scored job
    numeric = [r for r in board if r["task"] == "internal:numeric_param"]
    assert any(_value(r["std_best"]) for r in numeric)
    assert [r["rank"] for r in numeric].count("3") == 2, "two NoOpTrainer variants tie for third"
    assert {r["rank"] for r in board if r["task"] == "internal:non_trainable"} == {""}
    assert {r["ranked_on"] for r in board if r["task"] == "internal:code_param"} == {"test_best"}
    assert {r["ranked_on"] for r in board if r["task"] == "internal:numeric_param"} == {"best"}
    # order: tasks alphabetically; within a task by rank, unscored last, ties by trainer then label
    order = [(r["task"], int(r["rank"]) if r["rank"] else math.inf, r["trainer"], r["params_label"]) for r in board]
    assert order == sorted(order)

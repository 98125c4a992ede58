"""leaderboard.csv recomputed independently from results.csv (the rules of docs/artifacts.md).

Means, sample standard deviations, Student-t 95 % intervals cut to the task's declared score range
(scipy here, whatever the harness uses), ranks from scipy's paired t-test (identical differences: the
sign-flip p 2/2^n) Holm-corrected over each task's pairs of arms (arms not separated from the best
share rank 1; another arm ranks 1 + the arms found better), unscored arms last with an empty rank,
failed jobs counted apart (their spend is in the arm's cost per job).  When the leaderboard's arm
identity grows (optimizer, models), extend ``ARM``.
"""

from __future__ import annotations

import csv
import itertools
import json
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
        declared = next((json.loads(r["score_range"]) for r in rows if r["score_range"]), [None, None])
        bottom, top = (-math.inf if declared[0] is None else declared[0]), (math.inf if declared[1] is None else
                                                                               declared[1])
        best = [float(r["score_best"]) for r in ok]
        board[arm] = {
            "ranked_on": ranked_on, "count": len(ok), "failed": len(rows) - len(ok), "mean": mean, "std": std,
            "ci95_low": None if half is None or mean is None else min(max(mean - half, bottom), top),
            "ci95_high": None if half is None or mean is None else max(min(mean + half, top), bottom),
            "mean_best": _mean(best), "std_best": statistics.stdev(best) if len(best) > 1 else None,
            "mean_initial": _mean([float(r["score_initial"]) for r in ok if r["score_initial"] != ""]),
            "mean_test": _mean([float(r["score_test"]) for r in ok if r["score_test"] != ""]),
            "mean_test_last": _mean([float(r["score_test_last"]) for r in ok if r["score_test_last"] != ""]),
            "mean_llm_calls": _mean([float(r["llm_calls"]) for r in ran]),
            "mean_tokens": _mean([float(r["total_tokens"]) for r in ran]),
            "mean_cost_usd": _mean([float(r["cost_usd"]) for r in ran]),
        }
    for arm in board:
        board[arm]["rank"] = None
    for task in {arm[0] for arm in board}:
        _rank_task(board, [arm for arm in board if arm[0] == task and board[arm]["mean"] is not None], arms)
    return board


def _seed_scores(rows: list[dict[str, str]], metric: str) -> dict[int, float]:
    return {int(r["seed"]): float(r[f"score_{metric}"]) for r in rows
            if r["status"] in SCORED and r["score_best"] != "" and r[f"score_{metric}"] != ""}


def _rank_task(board: dict[tuple[str, ...], dict[str, object]], ranked: list[tuple[str, ...]],
               rows: dict[tuple[str, ...], list[dict[str, str]]]) -> None:
    """Ranks by the verdict's rule, every arm here complete: scipy's paired t-test, Holm over the pairs."""
    if not ranked:
        return
    pairs, p_values = [], []
    for a, b in itertools.combinations(ranked, 2):
        metric = str(board[a]["ranked_on"])
        x, y = _seed_scores(rows[a], metric), _seed_scores(rows[b], metric)
        seeds = sorted(set(x) & set(y))
        diff = [0.0 if abs(x[s] - y[s]) <= 1e-9 else x[s] - y[s] for s in seeds]
        if len(diff) < 2:
            p = math.nan
        elif all(d == 0 for d in diff):
            p = 1.0
        elif statistics.stdev(diff) <= 1e-9:
            p = 2 / 2 ** len(diff)
        else:
            p = float(stats.ttest_rel([x[s] for s in seeds], [y[s] for s in seeds]).pvalue)
        pairs.append((a, b, statistics.fmean(diff) if diff else 0.0))
        p_values.append(p)
    order = sorted((i for i, p in enumerate(p_values) if not math.isnan(p)), key=lambda i: p_values[i])
    adjusted, running = [math.nan] * len(p_values), 0.0
    for step, i in enumerate(order):
        running = max(running, min(1.0, (len(order) - step) * p_values[i]))
        adjusted[i] = running
    better = {(a, b) if mean > 0 else (b, a) for (a, b, mean), p in zip(pairs, adjusted, strict=True) if p < 0.05}
    best = max(ranked, key=lambda arm: board[arm]["mean"])  # type: ignore[arg-type,return-value]
    for arm in ranked:
        beaten_by = sum((other, arm) in better for other in ranked)
        board[arm]["rank"] = 1 if arm == best or (best, arm) not in better else 1 + beaten_by


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
        assert row["metric"] == want["ranked_on"], row
        for column in ("mean", "std", "mean_best", "std_best", "ci95_low", "ci95_high", "mean_initial", "mean_test",
                       "mean_test_last",
                       "mean_llm_calls", "mean_tokens", "mean_cost_usd"):
            got, wanted = _value(row[column]), want[column]
            assert (got is None and wanted is None) or got == pytest.approx(wanted, rel=1e-6, abs=1e-6), (column, row)
    # the matrix really has what the rules are about: a spread, a tie, arms with no scored job
    numeric = [r for r in board if r["task"] == "internal:numeric_param"]
    assert any(_value(r["std_best"]) for r in numeric)
    noop = [r["rank"] for r in numeric if r["trainer"] == "NoOpTrainer"]
    assert len(noop) == 2 and noop[0] == noop[1] != "1", "two NoOpTrainer variants tie, below the best"
    assert all(float(r["ci95_high"]) <= 0.0 for r in numeric if r["ci95_high"]), "inside the score range [-inf, 0]"
    assert {r["rank"] for r in board if r["task"] == "internal:non_trainable"} == {""}
    assert {r["metric"] for r in board if r["task"] == "internal:code_param"} == {"test_best"}
    assert {r["metric"] for r in board if r["task"] == "internal:numeric_param"} == {"best"}
    # order: tasks alphabetically; within a task by rank, then mean (best first), unscored last
    order = [(r["task"], int(r["rank"]) if r["rank"] else math.inf, -(float(r["mean"]) if r["mean"] else 0.0))
             for r in board]
    assert order == sorted(order)

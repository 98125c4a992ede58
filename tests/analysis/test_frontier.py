"""The cost–quality frontier: a hand-made run picks the expected arms (table --frontier, report), its
cost axis falls back from USD when a price is unknown, and a real stub run's leaderboard.csv
``on_frontier`` agrees with a brute-force Pareto check of results.csv and with the table."""

from __future__ import annotations

import csv
import statistics
from collections import defaultdict
from pathlib import Path

import pytest

pytest.importorskip("scipy")

from tests.analysis.conftest import STUB_MATRIX_GROUP  # noqa: E402
from tests.analysis.runs_kit import job, make_run  # noqa: E402
from tests.conftest import run_cli  # noqa: E402
from trace_bench.analysis import write_report  # noqa: E402

pytestmark = STUB_MATRIX_GROUP

# arm -> (USD per job, held-out score per seed): a trade-off curve with two dominated arms and a twin
ARMS = {"Cheap": (0.001, [0.2, 0.3, 0.4]),
        "Mid": (0.01, [0.5, 0.6, 0.7]),
        "MidTwin": (0.01, [0.7, 0.6, 0.5]),          # same means as Mid: neither beats the other
        "Dominated": (0.02, [0.4, 0.5, 0.6]),        # costs more than Mid, scores less
        "SameCostWorse": (0.01, [0.3, 0.4, 0.5]),    # Mid's cost, lower score
        "Best": (0.05, [0.8, 0.8, 0.8])}
EXPECTED = {"Cheap", "Mid", "MidTwin", "Best"}


def _hand_made(tmp_path: Path, unknown_price: str | None = None) -> Path:
    jobs = []
    for arm, (usd, scores) in ARMS.items():
        for seed, score in enumerate(scores, start=1):
            cost = 0.0 if arm == unknown_price else usd
            jobs.append(job("s:t", arm, seed, 0.9, score_test_best=score, score_test_last=score, cost_usd=cost,
                            total_tokens=int(usd * 1e6) + seed, llm_calls=3))
    jobs.append(job("s:t", "Broken", 1, None, status="failed", error="boom", cost_usd=0.5))
    return make_run(tmp_path, "r", jobs)


def _table(run: Path, *args: str) -> list[dict[str, str]]:
    proc = run_cli("table", str(run), "--frontier", "--format", "csv", *args)
    assert proc.returncode == 0, proc.stderr
    return list(csv.DictReader(proc.stdout.splitlines()))


def test_hand_made_run_picks_the_expected_arms(tmp_path: Path) -> None:
    rows = _table(_hand_made(tmp_path))
    assert {r["trainer"] for r in rows if r["on_frontier"] == "True"} == EXPECTED
    assert {r["cost_axis"] for r in rows} == {"usd"}
    assert float(next(r for r in rows if r["trainer"] == "Mid")["cost"]) == pytest.approx(0.01)
    assert next(r for r in rows if r["trainer"] == "Broken")["on_frontier"] == "False", "no scored seed: not on it"

    markdown = run_cli("table", str(tmp_path / "r"), "--frontier", check=True).stdout
    line = next(ln for ln in markdown.splitlines() if ln.startswith("- s:t"))
    assert line.index("Cheap (0.001 USD, 0.3)") < line.index("Mid") < line.index("Best (0.05 USD, 0.8)"), line
    assert "Dominated" not in line and "SameCostWorse" not in line
    assert "| frontier |" in markdown.splitlines()[0]


def test_an_unknown_price_moves_the_task_to_tokens(tmp_path: Path) -> None:
    """Dominated's USD is recorded as 0 (no price): on USD it would look free and join the frontier."""
    rows = _table(_hand_made(tmp_path, unknown_price="Dominated"))
    assert {r["cost_axis"] for r in rows} == {"tokens"}
    assert {r["trainer"] for r in rows if r["on_frontier"] == "True"} == EXPECTED


def test_report_draws_the_frontier_with_intervals(tmp_path: Path) -> None:
    html = write_report(_hand_made(tmp_path)).read_text()
    section = html[html.index('<section id="frontier">'):html.index('<section id="win-matrix">')]
    assert 'data-series="6" data-frontier="4"' in section, "six scored arms drawn, four on the frontier"
    mid = statistics.stdev(ARMS["Mid"][1])
    half = mid * 4.302653 / 3 ** 0.5
    assert f"[{0.6 - half:.4g}, {0.6 + half:.4g}]" in section, "the score's 95% t interval"
    assert section.count("<td>yes</td>") == 4


def _pareto_from_results(run: Path) -> dict[tuple[str, str, str], bool]:
    """Brute force from results.csv: per task, mean tokens (stub USD is 0) against the mean held-out
    score of the best state (else the selection split's best), as leaderboard.csv ranks."""
    with open(run / "results.csv", encoding="utf-8") as handle:
        rows = [r for r in csv.DictReader(handle) if r["status"] in ("ok", "budget_exhausted") and r["score_best"]]
    held_out = {r["task"] for r in rows if r["score_test_best"]}
    arms: dict[tuple[str, str, str], list[dict[str, str]]] = defaultdict(list)
    for row in rows:
        arms[(row["task"], row["trainer"], row["params_label"])].append(row)
    points = {}
    for arm, members in arms.items():
        column = "score_test_best" if arm[0] in held_out else "score_best"
        points[arm] = (statistics.fmean(float(m["total_tokens"]) for m in members),
                       statistics.fmean(float(m[column]) for m in members))

    def beaten(arm: tuple[str, str, str]) -> bool:
        cost, score = points[arm]
        return any(other[0] == arm[0] and other_cost <= cost and other_score >= score
                   and (other_cost < cost or other_score > score)
                   for other, (other_cost, other_score) in points.items())

    return {arm: not beaten(arm) for arm in points}


def test_leaderboard_csv_marks_the_frontier_of_a_stub_run(stub_matrix_run: Path) -> None:
    run = stub_matrix_run
    with open(run / "leaderboard.csv", encoding="utf-8") as handle:
        board = list(csv.DictReader(handle))
    marks = {(r["task"], r["trainer"], r["params_label"]): r["on_frontier"] == "true" for r in board}
    assert marks == _pareto_from_results(run)
    assert {r["frontier_axis"] for r in board} == {"tokens"}, "stub mode has no prices"
    assert any(marks.values()) and not all(marks.values())
    table = _table(run, "--metric", "test_best")
    assert {(r["task"], r["trainer"], r["params_label"]): r["on_frontier"] == "True" for r in table} == marks


def test_an_incomplete_arm_is_left_off_the_frontier_and_says_why(tmp_path: Path) -> None:
    """Survivor scored one seed of three (the others failed): its mean over the survivor would put it
    on the frontier over the complete arm.  Under issue 26's no-survivorship rule it is never on the
    frontier and pushes no complete arm off it; the line under the table and the report say so.  Its
    cost per job counts its failed seeds too (0.334 USD, not its survivor's 0.001)."""
    jobs = [job("s:t", "Survivor", 1, 0.9, score_test_best=0.9, score_test_last=0.9, cost_usd=0.001),
            job("s:t", "Survivor", 2, None, status="failed", error="boom", cost_usd=0.5),
            job("s:t", "Survivor", 3, None, status="failed", error="boom", cost_usd=0.5)]
    jobs += [job("s:t", "Honest", seed, 0.5, score_test_best=0.5, score_test_last=0.5, cost_usd=0.01)
             for seed in (1, 2, 3)]
    run = make_run(tmp_path, "r", jobs)
    markdown = run_cli("table", str(run), "--frontier", check=True).stdout
    line = next(ln for ln in markdown.splitlines() if ln.startswith("- s:t"))
    front, _, left_out = line.partition("; left out, incomplete: ")
    assert "Honest (0.01 USD, 0.5)" in front and "Survivor" not in front, line
    assert left_out == "Survivor (1/3 seeds)", line
    html = write_report(run).read_text()
    section = html[html.index('<section id="frontier">'):]
    assert "Survivor (incomplete 1/3 seeds, never on the frontier)" in section and "0.3337" in section

"""An arm's cost per job averages every job that ran: failed jobs spent money too.

QA's hand-made case: ``Survivor`` scored seed 1 at 0.001 USD, and seeds 2 and 3 failed after spending
0.5 USD each; ``Honest`` scored three seeds at 0.01 USD.  Averaged over the scored seeds only,
Survivor cost 0.001 USD per job and looked cheaper than Honest; it really cost 0.334 USD per job.
leaderboard.csv's ``mean_*``, the table's tokens/USD, the frontier and the report's arm statistics
must all say so (they agree by construction: one rule, in the store and in analysis).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

pytest.importorskip("scipy")

from tests.analysis.runs_kit import job, make_run  # noqa: E402
from tests.conftest import run_cli  # noqa: E402
from trace_bench.store.run_store import RunStore  # noqa: E402

SURVIVOR_USD = (0.001 + 0.5 + 0.5) / 3
SURVIVOR_TOKENS = (100 + 40_000 + 40_000) / 3


JOBS = [job("s:t", "Survivor", 1, 0.9, score_test_best=0.9, score_test_last=0.9, cost_usd=0.001,
            total_tokens=100, llm_calls=1),
        job("s:t", "Survivor", 2, None, status="failed", error="boom", cost_usd=0.5, total_tokens=40_000,
            llm_calls=20),
        job("s:t", "Survivor", 3, None, status="timeout", error="job_timeout", cost_usd=0.5, total_tokens=40_000,
            llm_calls=20),
        job("s:t", "Skipped", 1, None, status="skipped", error="unavailable", cost_usd=0.0, total_tokens=0,
            llm_calls=0)]
JOBS += [job("s:t", "Honest", seed, 0.5, score_test_best=0.5, score_test_last=0.5, cost_usd=0.01,
             total_tokens=1_000, llm_calls=5) for seed in (1, 2, 3)]


@pytest.fixture
def run(tmp_path: Path) -> Path:
    return make_run(tmp_path, "r", [dict(j) for j in JOBS])


def _leaderboard(tmp_path: Path) -> dict[str, dict[str, str]]:
    """leaderboard.csv as the driver writes it, from the same jobs as job records."""
    from tests.records import record_of

    store = RunStore.create(tmp_path, "records")
    tables = store.tables({"run_id": "records", "total_jobs": len(JOBS)})
    for index, spec in enumerate(JOBS):
        fields = {k: v for k, v in spec.items() if k not in ("status", "error")}
        tables.add(record_of(f"j{index}", status=spec.get("status", "ok"), error=spec.get("error", ""), **fields))
    tables.write()
    with open(store.leaderboard_path, encoding="utf-8") as handle:
        return {row["trainer"]: row for row in csv.DictReader(handle)}


def test_failed_jobs_count_in_the_leaderboards_cost_per_job(tmp_path: Path) -> None:
    board = _leaderboard(tmp_path)
    survivor = board["Survivor"]
    assert float(survivor["mean_cost_usd"]) == pytest.approx(SURVIVOR_USD)
    assert float(survivor["mean_tokens"]) == pytest.approx(SURVIVOR_TOKENS)
    assert float(survivor["mean_llm_calls"]) == pytest.approx(41 / 3)
    assert float(board["Honest"]["mean_cost_usd"]) == pytest.approx(0.01)
    assert board["Skipped"]["mean_cost_usd"] == "", "a skipped job did not run: it has no cost per job"


def test_failed_jobs_count_in_the_tables_and_the_frontiers_cost(run: Path) -> None:
    proc = run_cli("table", str(run), "--frontier", "--format", "csv")
    assert proc.returncode == 0, proc.stderr
    rows = {r["trainer"]: r for r in csv.DictReader(proc.stdout.splitlines())}
    assert float(rows["Survivor"]["usd"]) == pytest.approx(SURVIVOR_USD)
    assert float(rows["Survivor"]["tokens"]) == pytest.approx(SURVIVOR_TOKENS)
    assert float(rows["Survivor"]["cost"]) == pytest.approx(SURVIVOR_USD), "the frontier's cost per job"
    assert float(rows["Honest"]["cost"]) == pytest.approx(0.01)
    markdown = run_cli("table", str(run), "--frontier", check=True).stdout
    assert "Honest (0.01 USD, 0.5)" in markdown


def test_the_reports_arm_statistics_and_frontier_agree(run: Path) -> None:
    from trace_bench.analysis import load_runs
    from trace_bench.analysis.frontier import frontier_table
    from trace_bench.analysis.stats import arm_stats

    jobs = load_runs(run).jobs
    arms = arm_stats(jobs).set_index("trainer")
    assert arms.loc["Survivor", "cost_usd"] == pytest.approx(SURVIVOR_USD)
    assert arms.loc["Survivor", "llm_calls"] == pytest.approx(41 / 3)
    frontier = frontier_table(jobs).set_index("trainer")
    assert frontier.loc["Survivor", "cost_mean"] == pytest.approx(SURVIVOR_USD)
    assert not frontier.loc["Survivor", "on_frontier"] and frontier.loc["Honest", "on_frontier"]

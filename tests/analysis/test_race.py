"""Racing of seeds (``race:``) on a tiny stub matrix: the worse arm is stopped and why is recorded, the
jobs a race ran are the full run's own (the shared stub-matrix run holds this matrix's every job), the
report shows the elimination history, and a race killed with SIGKILL resumes to the same rounds and
results as an uninterrupted one."""

from __future__ import annotations

import csv
import os
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import ttest_rel

from tests.analysis.conftest import STUB_MATRIX_GROUP, run_config
from tests.conftest import REPO, run_cli
from tests.waiting import job_pids, read_events, wait_gone, wait_until
from trace_bench.store.models import RaceRecord
from trace_bench.store.run_store import RunStore

pytestmark = STUB_MATRIX_GROUP

#: one task, three arms of the shared stub matrix (same job ids), seeds raced from two
RACE = """
run_id: raced
mode: stub
seeds: [1, 2, 3, 4]
max_workers: 2
tasks: [internal:numeric_param]
trainers:
  - {id: PrioritySearch, params_variants: [{ps_steps: 2}]}
  - {id: BasicSearchAlgorithm, params_variants: [{num_steps: 2}]}
  - NoOpTrainer
race: {min_seeds: 2}
"""
#: what a job's result says, apart from when and how often it ran (its spend apart from what an attempt cut
#: short by a kill spent: that is carried into the job's cost columns)
SAME = ("job_id", "task", "trainer", "params_label", "seed", "status", "score_initial", "score_best", "score_final",
        "score_test_best", "score_test_last", "n_steps", "n_evals")


@pytest.fixture(scope="module")
def raced_run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return run_config(tmp_path_factory.mktemp("raced"), RACE)


def _rows(run: Path) -> dict[str, dict[str, str]]:
    with open(run / "results.csv", encoding="utf-8") as handle:
        return {row["job_id"]: {**{key: row[key] for key in SAME},
                                "own_llm_calls": int(row["llm_calls"]) - int(row["carried_llm_calls"] or 0),
                                "own_tokens": int(row["total_tokens"]) - int(row["carried_tokens"] or 0)}
                for row in csv.DictReader(handle)}


def _race(run: Path) -> RaceRecord:
    record = RunStore(run).read_race()
    assert record is not None
    return record


def _rounds(record: RaceRecord) -> list[dict[str, Any]]:
    """The rounds without their timestamps: what a resumed race must reproduce."""
    return [round_.model_dump(mode="json", exclude={"decided_at"}) for round_ in record.rounds]


def test_race_stops_the_worse_arm_and_records_why(raced_run: Path) -> None:
    record = _race(raced_run)
    rows = list(_rows(raced_run).values())
    eliminated = [(round_, d) for round_ in record.rounds for d in round_.decisions if d.outcome == "eliminated"]
    assert [d.arm.label for _, d in eliminated] == ["NoOpTrainer"]
    round_, decision = eliminated[0]
    given = [s for r in record.rounds[: round_.index + 1] for s in r.seeds]
    noop = [r for r in rows if r["trainer"] == "NoOpTrainer"]
    assert sorted(int(r["seed"]) for r in noop) == given == list(range(1, decision.seeds + 1))
    assert all("NoOpTrainer" not in {a.label for a in later.arms} for later in record.rounds[round_.index + 1:])
    # the recorded p-value is the paired t-test against the leader, Holm-corrected over the task's 3 pairs of arms
    leader = next(d for d in round_.decisions if d.outcome == "leader")
    leader_rows = {int(r["seed"]): float(r["score_best"]) for r in rows if r["trainer"] == leader.arm.trainer}
    raw = ttest_rel([leader_rows[s] for s in given], [float(r["score_best"]) for r in sorted(noop, key=lambda r: int(
        r["seed"]))]).pvalue
    assert decision.p_vs_leader is not None and raw <= decision.p_vs_leader <= 3 * raw + 1e-12
    assert decision.p_vs_leader < record.alpha and "worse than the leader" in decision.reason
    # the run's own leaderboard, over every seed that ran, says what the race said
    with open(raced_run / "leaderboard.csv", encoding="utf-8") as handle:
        board = {row["trainer"]: row for row in csv.DictReader(handle)}
    assert board["NoOpTrainer"]["vs_best"] == "below" and board[leader.arm.trainer]["vs_best"] == "best"
    # the other arms raced on to the last seed; the run holds exactly the jobs the race planned
    assert record.ended in ("decided", "max_seeds")
    assert len(rows) == len(record.job_ids) < record.full_jobs == 12
    assert sorted(r["job_id"] for r in rows) == sorted(record.job_ids)


def test_raced_results_equal_the_full_runs(raced_run: Path, stub_matrix_run: Path) -> None:
    raced, full = _rows(raced_run), _rows(stub_matrix_run)
    assert raced and set(raced) <= set(full)
    assert {job_id: full[job_id] for job_id in raced} == raced


def test_report_shows_the_elimination_history(raced_run: Path, tmp_path: Path) -> None:
    from trace_bench.analysis.report import write_report

    out = write_report(raced_run, tmp_path / "report.html")
    page = out.read_text(encoding="utf-8")
    decision = next(d for r in _race(raced_run).rounds for d in r.decisions if d.outcome == "eliminated")
    assert "How the race went" in page and "eliminated" in page
    assert f"{decision.p_vs_leader:.4g}" in page


def _kill_after(proc: subprocess.Popen[Any], events: Path, finished: int) -> bool:
    """SIGKILL the driver once ``finished`` jobs ended in the run's log; False when it ended first."""
    wait_until(lambda: proc.poll() is not None or sum(e.get("type") == "job_finished" for e in read_events(events))
               >= finished, what=f"{finished} finished jobs")
    if proc.poll() is not None:
        return False
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    return True


@pytest.mark.chaos
def test_killed_race_resumes_to_the_uninterrupted_race(raced_run: Path, tmp_path: Path,
                                                       drivers: list[subprocess.Popen[Any]]) -> None:
    (tmp_path / "c.yaml").write_text(RACE)
    run = tmp_path / "runs" / "raced"
    base = [sys.executable, "-m", "trace_bench", "run", "--runs-dir", str(tmp_path / "runs"), "--quiet"]
    command = [*base, "--config", str(tmp_path / "c.yaml")]
    landed = []
    for finished in (2, 7):  # inside round 0; then inside round 1, after a decision
        drivers.append(proc := subprocess.Popen(command, cwd=REPO, start_new_session=True,
                                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        landed.append(_kill_after(proc, run / "events.jsonl", finished))
        wait_gone(job_pids(run, unfinished_only=True), what="job processes of the killed driver")
        # the first kill (2 of round 0's 6 jobs ended) leaves the race open; on an idle machine the
        # second can come after the driver recorded the race's end (its last jobs end within one poll)
        assert len(landed) > 1 or (landed[0] and not _race(run).ended)
        command = [*base, "--resume", str(run)]
    before = _race(run)
    run_cli(*command[3:], check=True)
    after = _race(run)
    # the rounds decided before the kill are kept as recorded (never decided again); the rest as uninterrupted
    assert after.rounds[: len(before.rounds) - 1] == before.rounds[:-1]
    assert _rounds(after) == _rounds(_race(raced_run))
    assert _rows(run) == _rows(raced_run)


def test_a_raced_run_is_not_extended(raced_run: Path, tmp_path: Path) -> None:
    snapshot = (raced_run / "meta" / "config.snapshot.yaml").read_text()
    (tmp_path / "more.yaml").write_text(RACE.replace("seeds: [1, 2, 3, 4]", "seeds: [1, 2, 3, 4, 5]"))
    proc = run_cli("run", "--config", str(tmp_path / "more.yaml"), "--runs-dir", str(raced_run.parent), "--quiet")
    assert proc.returncode == 2 and "races its seeds and cannot be extended" in proc.stderr
    assert (raced_run / "meta" / "config.snapshot.yaml").read_text() == snapshot

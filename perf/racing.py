"""Racing of seeds (issue 37, point 4): does a raced run reach the full matrix's verdict, with how many jobs?

A stub matrix of 5 tasks (``internal:numeric_param`` at 5 targets) x 4 arms: one clearly better
(PrioritySearch, 4 steps), two close to each other (PrioritySearch 2 steps, BasicSearch 2 steps) and
one clearly worse (NoOpTrainer), 10 seeds.  It runs the full matrix (200 jobs) and the same config with
``race: {min_seeds: 3, max_seeds: 10}``, then prints, per task, the full run's verdict (leaderboard.csv:
its best arm and the arms tied with it) beside the race's (its leader and the arms still racing at its
end), the raced run's own leaderboard verdict, whether they agree, and the ratio of jobs.
Target: the same verdict with at most 60 % of the jobs.

    .venv/bin/python perf/racing.py [--keep DIR]
"""

from __future__ import annotations

import argparse
import csv
import resource
import subprocess
import tempfile
import time
from pathlib import Path

from _util import BIN, REPO, report

from trace_bench.store.run_store import RunStore

TARGETS = (3, 5, 7, 9, 11)
CONFIG = """
run_id: {run_id}
mode: stub
seeds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
max_workers: 2
tasks:
{tasks}
trainers:
  - {{id: PrioritySearch, params_variants: [{{ps_steps: 4}}, {{ps_steps: 2}}]}}
  - {{id: BasicSearchAlgorithm, params_variants: [{{num_steps: 2}}]}}
  - NoOpTrainer
{race}
"""


def _config(root: Path, run_id: str, race: str) -> Path:
    tasks = "\n".join(f"  - {{id: internal:numeric_param, eval_kwargs: {{target: {t}}}}}" for t in TARGETS)
    path = root / f"{run_id}.yaml"
    path.write_text(CONFIG.format(run_id=run_id, tasks=tasks, race=race))
    return path


def _run(config: Path, runs: Path) -> tuple[float, float]:
    """Wall and CPU seconds (the driver and every job process) of one ``trace-bench run``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run([str(BIN / "trace-bench"), "run", "--config", str(config), "--runs-dir", str(runs), "--quiet"],
                   cwd=REPO, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)


def board_verdict(run: Path) -> dict[str, tuple[str, frozenset[str]]]:
    """Per task of leaderboard.csv: (its best arm, the arms tied with it)."""
    found: dict[str, tuple[str, set[str]]] = {}
    with open(run / "leaderboard.csv", encoding="utf-8") as handle:
        for row in csv.DictReader(handle):
            arm = row["trainer"] + ("" if row["params_label"] == "default" else f" [{row['params_label']}]")
            best, tied = found.setdefault(row["task"], ("", set()))
            if row["vs_best"] == "best":
                found[row["task"]] = (arm, tied)
            elif row["vs_best"] == "tied":
                tied.add(arm)
    return {task: (best, frozenset(tied)) for task, (best, tied) in sorted(found.items())}


def race_verdict(run: Path) -> dict[str, tuple[str, frozenset[str]]]:
    """Per task of meta/race.json: (its leader, the arms racing when its race ended)."""
    record = RunStore(run).read_race()
    assert record is not None
    last = {}
    for round_ in record.rounds:
        for decision in round_.decisions:
            last[(decision.arm.task, decision.arm.label)] = decision.outcome
    verdict: dict[str, tuple[str, set[str]]] = {}
    for (task, label), outcome in sorted(last.items()):
        leader, tied = verdict.setdefault(task, ("", set()))
        if outcome == "leader":
            verdict[task] = (label, tied)
        elif outcome == "finished":
            tied.add(label)
    return {task: (leader, frozenset(tied)) for task, (leader, tied) in verdict.items()}


def _jobs(run: Path) -> int:
    with open(run / "results.csv", encoding="utf-8") as handle:
        return sum(1 for _ in csv.DictReader(handle))


def _say(verdict: tuple[str, frozenset[str]]) -> str:
    best, tied = verdict
    return best + (f" (tied: {', '.join(sorted(tied))})" if tied else " alone")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--keep", type=Path, help="write the two runs here and keep them")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        root = args.keep or Path(scratch)
        root.mkdir(parents=True, exist_ok=True)
        full_wall, full_cpu = _run(_config(root, "full", ""), root / "runs")
        race_wall, race_cpu = _run(_config(root, "raced", "race: {min_seeds: 3, max_seeds: 10}"), root / "runs")
        full, raced = root / "runs" / "full", root / "runs" / "raced"
        reference, decided, board = board_verdict(full), race_verdict(raced), board_verdict(raced)
        same = 0
        for task in reference:
            agree = reference[task] == decided.get(task) == board.get(task)
            same += agree
            print(f"{task}\n  full 10 seeds: {_say(reference[task])}\n  race:          {_say(decided[task])}\n"
                  f"  raced board:   {_say(board[task])}\n  same verdict:  {'yes' if agree else 'NO'}")
        record = RunStore(raced).read_race()
        assert record is not None
        print(f"race ended: {record.ended} after {len(record.rounds)} rounds")
        report("tasks with the same verdict", same, f"of {len(reference)}", f"{len(reference)}")
        report("jobs, full matrix", _jobs(full), "jobs")
        report("jobs, raced", _jobs(raced), "jobs")
        report("raced / full jobs", 100 * _jobs(raced) / _jobs(full), "%", "<= 60 %")
        report("CPU, full matrix (driver + jobs)", full_cpu, "s")
        report("CPU, raced (driver + jobs)", race_cpu, "s")
        report("wall, full matrix", full_wall, "s")
        report("wall, raced", race_wall, "s")
        met = same == len(reference) and _jobs(raced) <= 0.6 * _jobs(full)
    return 0 if met else 1


if __name__ == "__main__":
    raise SystemExit(main())

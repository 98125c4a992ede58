"""The elimination history of a raced run (``meta/race.json``, see ``trace_bench.runner.race``) in report.html.

Shown under the leaderboard of a run that raced its seeds: how many of the full matrix's jobs the race
ran and why it ended, one row per round (seeds added, arms racing, arms eliminated), and one row per
arm that left the race or ended it (eliminated in which round, over how many seeds, with the
Holm-corrected p-value of the verdict's paired test against the task's leader).  A run without a race
shows nothing.
"""

from __future__ import annotations

from typing import Any

from trace_bench.analysis import _html as h
from trace_bench.analysis.load import RunSet
from trace_bench.store.models import RaceRecord, StoreError
from trace_bench.store.run_store import RunStore

ENDS = {"decided": "decided: every task has one racing arm left", "max_seeds": "out of seeds: the arms still "
        "racing ran every seed", "max_jobs": "out of budget: the next round would pass race.max_jobs",
        "": "still racing (the run was stopped or is running)"}


def race_records(runs: RunSet) -> dict[str, RaceRecord]:
    """The race of each raced run of ``runs``, by run id (a damaged record is left out)."""
    found = {}
    for run_id, run_dir in runs.run_dirs.items():
        try:
            record = RunStore(run_dir).read_race()
        except StoreError:
            continue
        if record is not None:
            found[run_id] = record
    return found


def race_history(runs: RunSet) -> str:
    """The HTML of every raced run's history ('' when no run raced)."""
    parts = []
    for run_id, record in race_records(runs).items():
        parts.append(h.heading(3, f"Race of {run_id}" if len(runs.run_dirs) > 1 else "How the race went"))
        parts.append(h.paragraph(_summary(record)))
        parts.append(h.table(_round_rows(record), ["round", "seeds added", "jobs", "arms racing", "eliminated"],
                             numeric=(0, 2, 3, 4)))
        parts.append(h.table(_arm_rows(record), ["task", "arm", "outcome", "round", "seeds", "mean",
                                                 "p vs leader", "why"], numeric=(3, 4, 5, 6)))
    return "".join(parts)


def _summary(record: RaceRecord) -> str:
    ran, full = len(record.job_ids), record.full_jobs
    share = f" ({100 * ran / full:.0f} %)" if full else ""
    return (f"Seeds were raced: {ran} of the full matrix's {full} jobs ran{share}; {ENDS.get(record.ended, '')}. "
            f"Every arm ran its first {record.min_seeds} seeds, then each round added {record.seeds_per_round} seed(s) "
            f"to the arms that the verdict's test ({record.test}) could not separate from their task's leader at "
            f"alpha {record.alpha:g}; an arm it found worse was stopped. Seeds in order: "
            f"{', '.join(map(str, record.seeds))}.")


def _round_rows(record: RaceRecord) -> list[list[Any]]:
    rows = []
    for round_ in record.rounds:
        eliminated = sum(1 for d in round_.decisions if d.outcome == "eliminated")
        rows.append([round_.index, ", ".join(map(str, round_.seeds)), len(round_.jobs), len(round_.arms),
                     eliminated if round_.decided else "running"])
    return rows


def _arm_rows(record: RaceRecord) -> list[list[Any]]:
    """Per arm, its last decision: the round it was eliminated in, or how it ended the race."""
    last: dict[tuple[str, str], tuple[int, Any]] = {}
    for round_ in record.rounds:
        for decision in round_.decisions:
            last[(decision.arm.task, decision.arm.label)] = (round_.index, decision)
    rows = []
    for (task, label), (index, decision) in sorted(last.items()):
        rows.append([task, label, decision.outcome, index, decision.seeds, h.number(decision.mean),
                     h.number(decision.p_vs_leader), decision.reason])
    return rows

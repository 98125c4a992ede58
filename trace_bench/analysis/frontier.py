"""Which arm buys the most score per dollar: the cost–quality frontier of each task, with intervals.

Per task and arm: the mean trainer-phase cost per job over every job that ran, failed ones included
(USD, or tokens, or LLM calls where USD is unknown: :func:`trace_bench.store.frontier.cost_axis`),
and the mean score over the scored seeds (the verdict's metric: a held-out test score where the task
has one, see :mod:`.protocol`), each with its two-sided 95 % Student-t interval over seeds (inside
the task's declared score range, and above 0 for cost), and whether the arm is on the Pareto frontier (no other arm costs at
most as much and scores at least as well, better in one).  No survivorship: an *incomplete* arm (fewer
scored seeds than it planned: ``n`` of ``planned``, ``complete`` false) is shown but never on the
frontier, and pushes no complete arm off it.  The frontier is decided on the means; the
intervals say how firmly: two frontier arms whose intervals overlap on both axes are not told apart
by these seeds.  ``trace-bench table --frontier``, report.html's ``frontier`` section, the UI's
Browse tab and leaderboard.csv's ``on_frontier`` column all come from the same rule.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from trace_bench.analysis.load import ARM, ran_jobs
from trace_bench.analysis.protocol import DEFAULT_METRIC, task_metrics
from trace_bench.analysis.stats import arm_planned, mean_ci, task_ranges
from trace_bench.store.frontier import COST_AXES, COST_COLUMNS, cost_axis, on_frontier
from trace_bench.store.models import Spend, arm_label
from trace_bench.store.ranking import seeds_cell

AXIS_NAMES = {**COST_AXES, "evaluations": "evaluations", "wall_s": "wall s"}
FRONTIER_COLUMNS = ["task", "trainer", "params_label", "metric", "cost_axis", "n", "planned", "complete", "cost_mean",
                    "cost_low", "cost_high", "score_mean", "score_low", "score_high", "on_frontier"]


def task_cost_axis(ran: pd.DataFrame) -> str:
    """The cost axis of one task, from the jobs that ran."""
    return cost_axis(zip(ran["llm_calls"].fillna(0), ran["total_tokens"].fillna(0), ran["cost_usd"].fillna(0),
                         strict=True))


def frontier_table(jobs: pd.DataFrame, metric: str = DEFAULT_METRIC, axis: str | None = None) -> pd.DataFrame:
    """One row per task and arm (:data:`FRONTIER_COLUMNS`): cost (over the jobs that ran, on ``axis``, by
    default each task's :func:`task_cost_axis`) and score
    (over the scored seeds) means with their 95 % t intervals (NaN bounds below two jobs),
    ``n`` scored seeds with a score of the ``planned``
    ones (``complete`` when all), and ``on_frontier`` (never for an incomplete arm); ordered per task
    by cost, cheapest first."""
    if jobs.empty:
        return pd.DataFrame(columns=FRONTIER_COLUMNS)
    chosen, ranges = task_metrics(jobs, metric), task_ranges(jobs)
    rows = []
    for task, group in jobs.groupby("task", sort=True):
        task_axis = axis or task_cost_axis(ran_jobs(group))
        used = chosen[str(task)]
        for (trainer, label), arm in group.groupby(["trainer", "params_label"], sort=True):
            arm_scored = arm[arm["scored"]]
            cost = mean_ci(ran_jobs(arm)[COST_COLUMNS[task_axis]], score_range=(0.0, None))  # no cost is negative
            score = mean_ci(arm_scored[used.column], score_range=ranges.get(str(task)))
            planned = arm_planned(arm)
            rows.append({"task": task, "trainer": trainer, "params_label": label, "metric": used.name,
                         "cost_axis": task_axis, "n": score.n, "planned": planned, "complete": score.n == planned > 0,
                         "cost_mean": cost.mean, "cost_low": cost.low,
                         "cost_high": cost.high, "score_mean": score.mean, "score_low": score.low,
                         "score_high": score.high})
    frame = pd.DataFrame(rows, columns=[c for c in FRONTIER_COLUMNS if c != "on_frontier"])
    frame["on_frontier"] = False
    for _, index in frame.groupby("task").groups.items():
        points = [(None if pd.isna(c) else float(c), None if pd.isna(s) else float(s))
                  for c, s in zip(frame.loc[index, "cost_mean"], frame.loc[index, "score_mean"], strict=True)]
        frame.loc[index, "on_frontier"] = on_frontier(points, [bool(c) for c in frame.loc[index, "complete"]])
    frame["on_frontier"] = frame["on_frontier"].astype(bool)
    return frame.sort_values(["task", "cost_mean", "score_mean", *ARM[1:]], ascending=[True, True, False, True, True],
                             na_position="last").reset_index(drop=True)


def format_cost(value: float, axis: str) -> str:
    if value is None or math.isnan(value):
        return "-"
    if axis == Spend.COST:
        return f"{value:.4g} USD"
    return f"{value:,.0f} {AXIS_NAMES[axis]}" if value >= 100 else f"{value:.3g} {AXIS_NAMES[axis]}"


def frontier_lines(frame: pd.DataFrame) -> list[str]:
    """One line per task: its frontier arms from the cheapest, ``arm (cost, score)`` joined by
    arrows (cost is the mean per job on the task's axis; score the mean of the task's metric), then
    the incomplete arms it leaves out, each with its ``k/N seeds``."""
    lines = []
    for task, group in frame.groupby("task", sort=True):
        front = group[group["on_frontier"]]
        partial = group[~group["complete"].astype(bool)]
        left_out = ""
        if not partial.empty:
            names = [f"{arm_label(str(r['trainer']), str(r['params_label']))} "
                     f"({seeds_cell(int(r['n']), int(r['planned']))})" for _, r in partial.iterrows()]
            left_out = f"; left out, incomplete: {', '.join(names)}"
        if front.empty:
            lines.append(f"{task}: no complete arm has a score{left_out}")
            continue
        axis = str(front["cost_axis"].iloc[0])
        points = [f"{arm_label(str(r['trainer']), str(r['params_label']))} ({format_cost(r['cost_mean'], axis)}, "
                  f"{r['score_mean']:.4g})" for _, r in front.iterrows()]
        lines.append(f"{task} [{AXIS_NAMES[axis]} per job → {front['metric'].iloc[0]}]: " + " → ".join(points)
                     + left_out)
    return lines


FRONTIER_NOTE = ("Cost–quality frontier: per task, the arms no other arm beats on both mean trainer-phase cost per "
                 "job (every job that ran, failed ones included) and mean score, cheapest first (cost in USD, or tokens, or LLM calls where USD is unknown); "
                 "an incomplete arm (k/N seeds: some failed or are missing) is never on it.")


def frontier_marks(frame: pd.DataFrame) -> Mapping[tuple[str, str, str], bool]:
    """(task, trainer, params_label) → on the frontier."""
    return {(str(r["task"]), str(r["trainer"]), str(r["params_label"])): bool(r["on_frontier"])
            for _, r in frame.iterrows()}


def chart_points(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """The rows of one task as plain dicts, for the chart."""
    return [{key: r[key] for key in FRONTIER_COLUMNS} for _, r in frame.iterrows()]

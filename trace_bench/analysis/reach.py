"""Cost to reach: the spend at which an arm's anytime curve first reaches a fraction of the best known value.

The field asks "what does it cost to reach AlphaEvolve's value?", which a score read at the end cannot
answer.  For every job of a task with a best known value (``best_known_score`` in results.csv: the
selection score that stands for 100 % of it, 1.0 for the built-in discovery problems), the best-so-far
curve (:func:`.curves.best_so_far`, credited rows only) is read at each target (90, 99 and 100 % by
default): the first curve point whose best-so-far score reaches ``target × best_known_score`` gives
the spend at that point, in every unit the curve records (LLM calls, tokens, USD, task evaluations,
wall time).  Per arm: how many of its jobs that ran reached the target (``reached`` of ``jobs``; a
failed job counts and did not reach it), and the median spend over those that did.  ``trace-bench
table`` shows one column per target, report.html a section (``reach``), the UI the same table under
the frontier.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from trace_bench.analysis.curves import best_so_far
from trace_bench.analysis.load import ARM, ran_jobs
from trace_bench.store.models import Spend

TARGETS = (0.9, 0.99, 1.0)
#: curve.csv's spend columns, as a reader names them
SPEND = {"llm_calls": "LLM calls", "tokens": "tokens", Spend.COST: "USD", "n_evals": "evaluations", "wall_s": "wall s"}
REACH_COLUMNS = ["task", "trainer", "params_label", "target", "reached", "jobs", *SPEND]
#: relative slack on the threshold: a curve at exactly the best known value reaches 100 %
RELATIVE_SLACK = 1e-12


def _reached_at(points: pd.DataFrame, threshold: float) -> dict[str, float] | None:
    """The spend of the first point whose best-so-far reaches ``threshold``; None when none does."""
    hits = points[points["best_so_far"] >= threshold - RELATIVE_SLACK * abs(threshold)]
    if hits.empty:
        return None
    row = hits.iloc[0]
    return {column: float(row[column]) if column in row and pd.notna(row[column]) else math.nan for column in SPEND}


def job_reach(jobs: pd.DataFrame, curves: pd.DataFrame, targets: Sequence[float] = TARGETS) -> pd.DataFrame:
    """One row per (job, target) for the jobs that ran of tasks with a ``best_known_score``: the job's
    arm, ``reached`` (bool) and the spend at which it did (NaN where it did not)."""
    if jobs.empty or "best_known_score" not in jobs or jobs["best_known_score"].isna().all():
        return pd.DataFrame(columns=["run_id", "job_id", *ARM, "target", "reached", *SPEND])
    ordered = best_so_far(curves) if not curves.empty else curves
    keys = [c for c in ("run_id", "job_id") if c in jobs and c in ordered]
    by_job = {(key if isinstance(key, tuple) else (key,)): group
              for key, group in ordered.groupby(keys, sort=False)} if not ordered.empty else {}
    rows = []
    for _, job in ran_jobs(jobs).iterrows():
        reference = job.get("best_known_score")
        if reference is None or pd.isna(reference) or float(reference) <= 0:
            continue
        points = by_job.get(tuple(job[c] for c in keys))
        for target in targets:
            spend = _reached_at(points, float(target) * float(reference)) if points is not None else None
            rows.append({"run_id": job.get("run_id", ""), "job_id": job["job_id"], **{c: job[c] for c in ARM},
                         "target": float(target), "reached": spend is not None,
                         **(spend or dict.fromkeys(SPEND, math.nan))})
    return pd.DataFrame(rows, columns=["run_id", "job_id", *ARM, "target", "reached", *SPEND])


def reach_table(jobs: pd.DataFrame, curves: pd.DataFrame, targets: Sequence[float] = TARGETS) -> pd.DataFrame:
    """Per arm and target (:data:`REACH_COLUMNS`): ``reached`` of ``jobs`` that ran, and the median spend
    of the jobs that reached it (NaN when none did)."""
    per_job = job_reach(jobs, curves, targets)
    if per_job.empty:
        return pd.DataFrame(columns=REACH_COLUMNS)
    rows = []
    for (task, trainer, label, target), group in per_job.groupby([*ARM, "target"], sort=True):
        hit = group[group["reached"]]
        rows.append({"task": task, "trainer": trainer, "params_label": label, "target": target,
                     "reached": len(hit), "jobs": len(group),
                     **{c: float(np.median(hit[c].dropna())) if hit[c].notna().any() else math.nan for c in SPEND}})
    return pd.DataFrame(rows, columns=REACH_COLUMNS)


def target_label(target: float) -> str:
    return f"{100 * target:g} %"


def _amount(value: float, column: str) -> str:
    if column == Spend.COST:
        return f"{value:.4g} USD"
    if column == "wall_s":
        return f"{value:.3g} s"
    name = SPEND[column]
    return f"{value:,.0f} {name[:-1] if value == 1 and name.endswith('s') else name}"


def reach_cell(row: pd.Series) -> str:
    """``2/3 · 14 evaluations · 1,203 tokens · 4.1 s``: how many reached it, then the median spend of
    those (LLM spend only where there is some); ``0/3`` when none did."""
    cell = f"{int(row['reached'])}/{int(row['jobs'])}"
    if not row["reached"]:
        return cell
    parts = [_amount(row["n_evals"], "n_evals")] if pd.notna(row["n_evals"]) else []
    for column in (Spend.COST, "tokens", "llm_calls"):
        if pd.notna(row[column]) and row[column] > 0:
            parts.append(_amount(row[column], column))
            break
    if pd.notna(row["wall_s"]):
        parts.append(_amount(row["wall_s"], "wall_s"))
    return " · ".join([cell, *parts])


def reach_columns(table: pd.DataFrame) -> pd.DataFrame:
    """The reach table pivoted for the paper table: one string column per target (``reach_99``), per arm."""
    if table.empty:
        return pd.DataFrame(columns=ARM)
    cells = table.assign(cell=[reach_cell(r) for _, r in table.iterrows()],
                         column=[f"reach_{100 * t:g}" for t in table["target"]])
    return cells.pivot_table(index=ARM, columns="column", values="cell", aggfunc="first").reset_index()


REACH_NOTE = ("Cost to reach: per arm and fraction of the best known value, how many of its jobs' anytime curves "
              "reached it (k/n: failed jobs count, and did not) and the median spend at which they first did: task "
              "evaluations, the trainer's LLM spend where it has some (USD, else tokens, else calls), wall time.")


def reach_html(table: pd.DataFrame) -> str:
    """report.html's ``reach`` section (and the UI's): one table per task, an arm per row, each target's
    ``k/n`` and median spend in every unit."""
    from trace_bench.analysis import _html as h

    if table.empty:
        return h.paragraph("No task with a best known value (cost to reach needs one: the built-in discovery "
                           "problems have two, a task folder may declare one).")
    parts = []
    for task, group in table.groupby("task", sort=True):
        rows = [[r["trainer"], r["params_label"], target_label(r["target"]), f"{int(r['reached'])}/{int(r['jobs'])}",
                 *(r[c] for c in SPEND)] for _, r in group.iterrows()]
        parts += [h.heading(3, str(task)),
                  h.table(rows, ["trainer", "params", "target", "reached", *(f"median {v}" for v in SPEND.values())],
                          numeric=range(3, 4 + len(SPEND)))]
    return "".join(parts)

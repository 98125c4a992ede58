"""Scores at equal spend: each arm's anytime curve read where every arm can be read.

Final scores of arms that spent different amounts do not compare: an arm that stopped at 2 of its
12 calls is compared with one that used all 12.  Per task this module reads every job's best-so-far
curve (:mod:`.curves`, the selection split, the budget's axis) at

- the **equal spend**: the least total spend among the task's scored jobs that spent any (a job that
  spent nothing on the axis, a baseline calling no LLM, holds its score at every spend), so every
  scored job of every arm is read at a spend it reached (``at_equal``, that spend in ``equal_spend``);
- the **checkpoints** a config names, ``analysis: {at: [10, 25, 50]}``, in the budget's unit
  (``at_10``, ...; NaN for a job whose first point lies beyond one);
- and the whole budget: the normalized area under the curve (``auc``: the mean best-so-far score
  over the budget, or over the largest spend of the task without one, on the score's own scale).

Each is a per-job score (:func:`equal_spend_jobs`), so an arm's mean and the verdict's paired
test apply to it as to any score (``trace-bench verdict --metric at_equal|auc``); :func:`equal_spend_arms`
gives the per-arm means ``table``, report.html and the UI show.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import Any

import pandas as pd

from trace_bench.analysis.curves import best_so_far, job_auc, score_at
from trace_bench.analysis.load import ARM, RunSet
from trace_bench.store.models import SPEND_AXES
from trace_bench.store.models.budget_use import LIMITS

#: the budget's limits a curve is drawn on, in the order the axis is chosen by (the first the config sets)
BUDGET_AXES = tuple(name for name in LIMITS if name in SPEND_AXES)
#: per-job columns this module adds (checkpoint columns ``at_<value>`` follow)
EQUAL_COLUMNS = ("at_equal", "equal_spend", "auc")


def spend_axis(snapshots: Mapping[str, Mapping[str, Any]]) -> tuple[str, float | None]:
    """The budget's axis and limit (the first limit any run's config sets; ``llm_calls`` and no
    limit without a budget)."""
    for axis in BUDGET_AXES:
        limits = [float(s["budget"][axis]) for s in snapshots.values()
                  if isinstance(s.get("budget"), Mapping) and s["budget"].get(axis)]
        if limits:
            return axis, max(limits)
    return "llm_calls", None


def checkpoints(snapshots: Mapping[str, Mapping[str, Any]]) -> list[float]:
    """The spends a config names under ``analysis: {at: [...]}`` (every run's, sorted, once each)."""
    found: set[float] = set()
    for snapshot in snapshots.values():
        analysis = snapshot.get("analysis")
        if isinstance(analysis, Mapping):
            found.update(float(value) for value in analysis.get("at") or ())
    return sorted(found)


def checkpoint_column(value: float) -> str:
    return f"at_{value:g}"


def equal_spend_jobs(runs: RunSet) -> pd.DataFrame:
    """Per job (its keys, ``scored``): ``at_equal``, ``equal_spend``, ``auc`` and one ``at_<value>``
    per checkpoint; empty when the runs have no curves."""
    axis, limit = spend_axis(runs.snapshots)
    marks = checkpoints(runs.snapshots)
    curves = runs.curves
    columns = [*ARM, "seed", "run_id", "job_id", "scored", *EQUAL_COLUMNS, *map(checkpoint_column, marks)]
    if curves.empty or axis not in curves:
        return pd.DataFrame(columns=columns)
    prepared = best_so_far(curves)
    spent = prepared.groupby(["run_id", "job_id"])[axis].max() if "run_id" in prepared else \
        prepared.groupby("job_id")[axis].max()
    jobs = runs.jobs[runs.jobs["scored"]]
    equal: dict[str, float] = {}
    for task, group in jobs.groupby("task"):
        ids = list(zip(group["run_id"], group["job_id"], strict=True)) if "run_id" in prepared else list(group["job_id"])
        # a job that spent nothing on the axis (a baseline that calls no LLM) bounds nothing: its
        # curve holds its score at every spend
        reached = [float(spent[key]) for key in ids if key in spent.index and float(spent[key]) > 0]
        if reached:
            equal[str(task)] = min(reached)
    keys = [c for c in ("run_id", "job_id") if c in prepared]
    frame = runs.jobs[[*ARM, "seed", *keys, "scored"]].copy()
    read = _read(prepared, axis, equal, "at_equal", keys)
    frame = frame.merge(read, on=keys, how="left")
    frame["equal_spend"] = frame["task"].map(equal)
    auc = job_auc(prepared, axis, limit) if limit else job_auc(prepared, axis)
    frame = frame.merge(auc[[*keys, "auc"]], on=keys, how="left")
    for mark in marks:
        frame = frame.merge(_read(prepared, axis, mark, checkpoint_column(mark), keys), on=keys, how="left")
    return frame.reindex(columns=[c for c in columns if c in frame])


def _read(curves: pd.DataFrame, axis: str, at: Mapping[str, float] | float, column: str,
          keys: list[str]) -> pd.DataFrame:
    """Per job, its best-so-far at ``at`` (one spend, or one per task)."""
    if isinstance(at, Mapping):
        parts = [score_at(curves[curves["task"] == task], axis, value) for task, value in at.items()]
        frame = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=[*keys, "score_at"])
    else:
        frame = score_at(curves, axis, float(at))
    return frame[[*keys, "score_at"]].rename(columns={"score_at": column})


def equal_spend_arms(runs: RunSet) -> pd.DataFrame:
    """Per arm, the mean over its scored jobs of every column of :func:`equal_spend_jobs`."""
    jobs = equal_spend_jobs(runs)
    scores = [c for c in jobs.columns if c.startswith("at_") or c in ("auc", "equal_spend")]
    if jobs.empty:
        return pd.DataFrame(columns=[*ARM, *scores])
    scored = jobs[jobs["scored"].astype(bool)]
    return scored.groupby(ARM, sort=True)[scores].mean().reset_index()


def equal_spend_html(runs: RunSet) -> str:
    """report.html's table of scores at equal spend (under the anytime curves): per task and arm."""
    from trace_bench.analysis import _html as h

    arms = equal_spend_arms(runs)
    if arms.empty:
        return ""
    axis, _ = spend_axis(runs.snapshots)
    marks = [c for c in arms.columns if c.startswith("at_") and c != "at_equal"]
    rows = [[r["task"], r["trainer"], r["params_label"], r["equal_spend"], r["at_equal"], *(r[c] for c in marks),
             r["auc"]] for _, r in arms.iterrows()]
    note = (f"Each arm's best-so-far score on the selection split (optimistic), mean over its scored seeds, read at "
            f"the least {axis} any scored job of the task spent (every arm reached it), at each spend the config's "
            "analysis.at names, and as the mean over the budget (AUC). `trace-bench verdict --metric at_equal` "
            "(or auc, at_<spend>) ranks on them.")
    return "".join([h.heading(3, "Scores at equal spend"), h.paragraph(note),
                    h.table(rows, ["task", "trainer", "params", f"equal spend ({axis})", "at equal spend",
                                   *(f"at {c[3:]}" for c in marks), "AUC"], numeric=range(3, 5 + len(marks) + 1))])


def is_equal_spend_metric(name: str) -> bool:
    """``at_equal``, ``auc`` or ``at_<spend>``: a metric read off the anytime curves."""
    return name in ("at_equal", "auc") or re.fullmatch(r"at_\d+(\.\d+)?", name) is not None


def equal_spend_text(name: str) -> str:
    what = {"at_equal": "at the least spend any scored job of the task reached",
            "auc": "as its mean over the budget (normalized AUC)"}.get(name, f"once {name[3:]} was spent")
    return (f"Ranked on {name}: each job's best-so-far score on the selection split (optimistic) {what}, "
            "in the budget's unit.")


def as_metric(runs: RunSet, name: str) -> RunSet:
    """``runs`` whose jobs' ``score_best`` is the curve's reading ``name`` (test scores cleared), so the
    verdict's tests rank on it as on the selection-split metric ``best``; a checkpoint ``at_<spend>``
    is read even where the config did not name it."""
    if name.startswith("at_") and name != "at_equal":
        snapshots = {run: {**snap, "analysis": {"at": [float(name[3:])]}} for run, snap in runs.snapshots.items()}
        per_job = equal_spend_jobs(dataclasses.replace(runs, snapshots=snapshots))
        column = checkpoint_column(float(name[3:]))
    else:
        per_job, column = equal_spend_jobs(runs), name
    keys = [c for c in ("run_id", "job_id") if c in runs.jobs and c in per_job]
    values = runs.jobs[keys].merge(per_job[[*keys, column]], on=keys, how="left")[column].to_numpy()
    nan = float("nan")
    jobs = runs.jobs.assign(score_best=values, **{c: nan for c in ("score_test_best", "score_test_last", "score_test")
                                                  if c in runs.jobs})
    return dataclasses.replace(runs, jobs=jobs)

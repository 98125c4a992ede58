"""Which score a comparison ranks on: held-out test scores when a task has them, else the
selection split, labelled optimistic.

Selection (which state a job reports as *best*) uses the validation split, or train when a task
has none.  The best score on that split is biased upwards (it is the maximum over the states the
split itself chose), so rankings, paired tests and tables use a held-out test score whenever the
task has a test split: by default the test score of the best state (``test_best``: the state an
honest protocol would ship), or of the last iterate (``test_last``: what the optimizer ends on,
with no selection at all).  The choice is made per task, so one run can mix tasks with and without
a test split, and every output says which metric each task was ranked on.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from trace_bench.store.ranking import DEFAULT_METRIC as DEFAULT_METRIC  # re-exported: the verdict's default
from trace_bench.store.ranking import METRIC_FIELDS, check_metric, task_metric

#: the column a ranking reads after :func:`with_rank_score`
RANK_SCORE = "rank_score"
RANK_METRIC = "rank_metric"


@dataclass(frozen=True)
class Metric:
    """A per-job score column a comparison may rank on."""

    name: str
    column: str
    label: str
    held_out: bool


_LABELS = {"test_best": "held-out test score of the best state",
           "test_last": "held-out test score of the last iterate",
           "best": "best score on the selection split (optimistic)"}
METRICS = {name: Metric(name, column, _LABELS[name], name != "best") for name, column in METRIC_FIELDS.items()}


def metric(name: str) -> Metric:
    return METRICS[check_metric(name)]


def has_scores(jobs: pd.DataFrame, column: str) -> bool:
    """Whether some scored job has a value in ``column``."""
    return column in jobs and bool(jobs.loc[jobs["scored"], column].notna().any())


def task_metrics(jobs: pd.DataFrame, preferred: str = DEFAULT_METRIC) -> dict[str, Metric]:
    """Per task, the metric it is ranked on: ``preferred`` when it is held out and some scored job
    of the task has it, else ``best`` (the selection split, optimistic)."""
    column = metric(preferred).column
    return {str(task): METRICS[task_metric(has_scores(group, column), preferred)]
            for task, group in jobs.groupby("task", sort=True)}


def with_rank_score(jobs: pd.DataFrame, preferred: str = DEFAULT_METRIC) -> pd.DataFrame:
    """``jobs`` with ``rank_score`` (the value of its task's ranking metric) and ``rank_metric``
    (that metric's name) per row."""
    chosen = task_metrics(jobs, preferred)
    names = jobs["task"].map(lambda task: chosen[str(task)].name)
    score = pd.Series(float("nan"), index=jobs.index)
    for name in names.unique():
        rows = names == name
        score[rows] = jobs.loc[rows, METRICS[name].column].astype(float)
    return jobs.assign(**{RANK_SCORE: score, RANK_METRIC: names})


def describe(chosen: dict[str, Metric]) -> str:
    """One sentence naming what each task was ranked on, for reports and the terminal."""
    by_metric: dict[str, list[str]] = {}
    for task, item in sorted(chosen.items()):
        by_metric.setdefault(item.name, []).append(task)
    parts = []
    for name, tasks in by_metric.items():
        item = METRICS[name]
        where = "every task" if len(by_metric) == 1 else ", ".join(tasks)
        parts.append(f"{where}: {item.label}" + ("" if item.held_out else
                                                 " — the split that selected the state, so it flatters every arm"))
    return "Ranked on " + "; ".join(parts) + "."

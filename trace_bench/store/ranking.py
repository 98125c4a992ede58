"""The one ranking rule of every leaderboard (leaderboard.csv, the CLI summary, report.html, the UI)
and the one choice of what it ranks on (a held-out test score where a task has one).

A *task* here is a task under one set of ``eval_kwargs``: a run that has ``numeric_param`` with
``target: 3`` and ``target: 5`` has two tasks, named by their labels
(``internal:numeric_param[target=3]``), ranked, paired and corrected apart (:func:`variant_of`).

Per task, arms are ranked by their mean score, higher first; means equal to within
:data:`TIE_TOLERANCE` share the lowest rank ("1224" competition ranking, so float noise never splits
a tie).  No survivorship: an arm with failed or missing seeds (fewer scored seeds than it planned)
is *incomplete* and ranked after every complete arm of its task, whatever its mean (its surviving
seeds may be its lucky ones), and every table marks it ``k/N seeds``.  An arm with no scored seed
(every job failed or skipped) gets no rank and is listed last, counted as failed, never as a score
of 0.
"""

from __future__ import annotations

from collections.abc import Sequence

TIE_TOLERANCE = 1e-9


def tie_key(mean: float) -> float:
    """The value ties are decided on: the mean rounded to :data:`TIE_TOLERANCE`."""
    return round(mean / TIE_TOLERANCE) * TIE_TOLERANCE


def competition_ranks(means: Sequence[float | None]) -> list[int | None]:
    """Rank of each mean among ``means`` (1 = best); None for None."""
    keys = [None if m is None else tie_key(m) for m in means]
    present = [k for k in keys if k is not None]
    return [None if k is None else 1 + sum(1 for other in present if other > k) for k in keys]


def arm_ranks(means: Sequence[float | None], complete: Sequence[bool]) -> list[int | None]:
    """Ranks of one task's arms: complete arms first by :func:`competition_ranks`, then incomplete
    arms by theirs, numbered after the last complete arm; None for an arm without a mean."""
    full = competition_ranks([m if done else None for m, done in zip(means, complete, strict=True)])
    partial = competition_ranks([None if done else m for m, done in zip(means, complete, strict=True)])
    offset = sum(1 for rank in full if rank is not None)
    return [f if done else (None if p is None else offset + p)
            for f, p, done in zip(full, partial, complete, strict=True)]


#: how results written before ``task_label`` existed marked an eval_kwargs variant in ``params_label``
EVAL_SUFFIX = ";eval:"


def variant_of(task: str, task_label: str | None, params_label: str | None) -> tuple[str, str]:
    """(task label, params label) of a job: the task as tables name it, and the trainer variant.
    Records written before ``task_label`` existed carried the eval_kwargs variant as an
    ``;eval:k=v`` suffix of ``params_label``; it is moved into the task label."""
    params = params_label or "default"
    if EVAL_SUFFIX in params:
        params, _, variant = params.partition(EVAL_SUFFIX)
        return task_label or f"{task}[{variant}]", params or "default"
    return task_label or task, params


def seeds_cell(scored: int, planned: int) -> str:
    """How an arm's completeness is shown: ``k/N seeds``."""
    return f"{scored}/{planned} seeds"


#: per-job scores a leaderboard may rank on, and the JobResult field holding each
METRIC_FIELDS = {"test_best": "score_test_best", "test_last": "score_test_last", "best": "score_best"}
#: metrics measured on a held-out split (the others are on the split that selected the state)
HELD_OUT_METRICS = ("test_best", "test_last")
#: what a leaderboard ranks a task on when it has a test split
DEFAULT_METRIC = "test_best"


def check_metric(name: str) -> str:
    if name not in METRIC_FIELDS:
        raise ValueError(f"unknown metric {name!r}; choose one of {', '.join(METRIC_FIELDS)}")
    return name


def task_metric(held_out_available: bool, preferred: str = DEFAULT_METRIC) -> str:
    """The metric a task is ranked on: ``preferred`` unless it is held out and no scored job of the
    task has a test score, then ``best`` (the selection split, optimistic: it chose the state)."""
    check_metric(preferred)
    return preferred if held_out_available or preferred not in HELD_OUT_METRICS else "best"

"""The one ranking rule of every leaderboard (leaderboard.csv, the CLI summary, ``trace-bench table``,
report.html, the UI) and the one choice of what it ranks on (a held-out test score where a task has one).

A *task* here is a task under one set of ``eval_kwargs``: a run that has ``numeric_param`` with
``target: 3`` and ``target: 5`` has two tasks, named by their labels
(``internal:numeric_param[target=3]``), ranked, paired and corrected apart (:func:`variant_of`).

Ties are ties: per task, an arm's rank comes from the verdict's paired test
(:mod:`trace_bench.store.paired`), not from its mean alone.  The *best* arm is the complete arm with
the highest mean; every arm the test cannot separate from it shares rank 1; an arm it separates from
the best is ranked 1 + the number of arms the test finds better than it.  So a sole #1 means the test
separated the best arm from every other arm, and two arms with different means but no decided
difference share a rank.  No survivorship: an arm with failed or missing seeds (fewer scored seeds
than it planned) is *incomplete* and ranked after every complete arm of its task, by the same rule
among the incomplete arms (its surviving seeds may be its lucky ones), and every table marks it
``k/N seeds``.  An arm with no scored seed (every job failed or skipped) gets no rank and is listed
last, counted as failed, never as a score of 0.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

TIE_TOLERANCE = 1e-9


def verdict_ranks(means: Sequence[float | None], complete: Sequence[bool],
                  outcome: Callable[[int, int], str]) -> list[int | None]:
    """Ranks of one task's arms (1 = best; None for an arm without a mean) under the rule of this
    module.  ``outcome(i, j)`` is the verdict's decision for arm i against arm j: ``better``,
    ``worse`` or ``tied``.  Complete arms are ranked first, then incomplete arms after them."""
    ranks: list[int | None] = [None] * len(means)
    offset = 0
    for group in ([i for i, m in enumerate(means) if m is not None and complete[i]],
                  [i for i, m in enumerate(means) if m is not None and not complete[i]]):
        if not group:
            continue
        best = max(group, key=lambda i: means[i])  # type: ignore[arg-type,return-value]
        for i in group:
            if i == best or outcome(best, i) != "better":
                ranks[i] = offset + 1
            else:
                ranks[i] = offset + 1 + sum(1 for j in group if j != i and outcome(j, i) == "better")
        offset += len(group)
    return ranks


def best_arm(means: Sequence[float | None], complete: Sequence[bool]) -> int | None:
    """Index of the task's best arm: the complete arm with the highest mean (the first such), else
    the incomplete one; None when no arm has a mean."""
    for group in ([i for i, m in enumerate(means) if m is not None and complete[i]],
                  [i for i, m in enumerate(means) if m is not None]):
        if group:
            return max(group, key=lambda i: means[i])  # type: ignore[arg-type,return-value]
    return None


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

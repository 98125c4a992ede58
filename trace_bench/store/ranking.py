"""The one ranking rule of every leaderboard (leaderboard.csv, the CLI summary, report.html, the UI)
and the one choice of what it ranks on (a held-out test score where a task has one).

Per task, arms are ranked by their mean score, higher first; means equal to within
:data:`TIE_TOLERANCE` share the lowest rank ("1224" competition ranking, so float noise never splits
a tie); an arm with no scored seed (every job failed or skipped) gets no rank and is listed last,
counted as failed, never as a score of 0.
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

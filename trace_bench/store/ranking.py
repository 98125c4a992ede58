"""The one ranking rule of every leaderboard (leaderboard.csv, the CLI summary, report.html, the UI).

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

"""The cost–quality frontier: which arms of a task no other arm beats on both cost and score.

An arm is a point (mean trainer-phase cost per job over every job that ran, failed ones included,
since a provider bills a job that then failed; mean score over its scored seeds).  It is on the
task's Pareto frontier when no other arm costs at most as much and scores at least as well, better in
one of the two.  Equal points are all on it (neither beats the other); an arm without a scored seed
is never on it, and neither is an *incomplete* arm (failed or missing seeds: its surviving seeds may
be its lucky ones), which also pushes no complete arm off it (the ranking rule of
:mod:`trace_bench.store.ranking`: an incomplete arm never outranks a complete one).  Cost is measured on one axis per task, the first of USD, tokens and LLM calls that
every job of the task that called the LLM has a positive value for: USD is unknown (recorded as 0)
in stub mode and for models without a price, and a frontier that treated those as free would put
them first.  leaderboard.csv (``on_frontier``), ``trace-bench table --frontier``, report.html and
the UI all use these two functions, so they agree; this module is plain Python because the driver
writes leaderboard.csv without the ``analysis`` extra.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

from trace_bench.store.models import COUNTED, SPEND_AXES, SPEND_COLUMNS, Spend
from trace_bench.store.ranking import TIE_TOLERANCE

#: cost axes in order of preference, and how each is named for a reader
COST_AXES = {name: SPEND_AXES[name] for name in reversed(COUNTED)}
#: results.csv's column of each cost axis (the budget's counted figures, from Spend); ``evaluations`` and
#: ``wall_s`` only when asked for (``table --cost-axis``): the non-LLM baselines cost nothing on the LLM
#: axes (as NoOpTrainer), and compute on these
COST_COLUMNS = {**dict(reversed(SPEND_COLUMNS.items())), "evaluations": "n_evals", "wall_s": "time_seconds"}
#: costs closer than this, relative to the larger, are equal (means of sums of float USD)
COST_TOLERANCE = 1e-9


def cost_axis(jobs: Iterable[tuple[float, float, float]]) -> str:
    """The axis a task's frontier is drawn on, from its jobs' (llm_calls, tokens, usd) (those that ran): the
    first of ``usd``, ``tokens``, ``llm_calls`` that is positive for every job that made a trainer
    call (``llm_calls`` when none did, or when some job's USD and tokens are both unknown)."""
    callers = [(tokens, usd) for calls, tokens, usd in jobs if calls and calls > 0]
    if callers and all(usd is not None and usd > 0 for _, usd in callers):
        return Spend.COST
    if callers and all(tokens is not None and tokens > 0 for tokens, _ in callers):
        return "tokens"
    return "llm_calls"


def _cost_le(a: float, b: float) -> bool:
    return a <= b or abs(a - b) <= COST_TOLERANCE * max(abs(a), abs(b))


def _cost_lt(a: float, b: float) -> bool:
    return not _cost_le(b, a)


def dominates(a: tuple[float, float], b: tuple[float, float]) -> bool:
    """Whether point ``a`` (cost, score) beats ``b``: no costlier, no worse, and better in one (scores
    within :data:`TIE_TOLERANCE` and costs within :data:`COST_TOLERANCE` are equal)."""
    (cost_a, score_a), (cost_b, score_b) = a, b
    no_worse = _cost_le(cost_a, cost_b) and score_a >= score_b - TIE_TOLERANCE
    return no_worse and (_cost_lt(cost_a, cost_b) or score_a > score_b + TIE_TOLERANCE)


def on_frontier(points: Sequence[tuple[float | None, float | None]],
                complete: Sequence[bool] | None = None) -> list[bool]:
    """For each (mean cost, mean score) of one task's arms, whether it is on the Pareto frontier;
    a point with a missing or non-finite coordinate is not, and beats nothing.  ``complete`` (one
    flag per point; all complete when omitted) applies the no-survivorship rule: an incomplete arm
    (failed or missing seeds) is never on the frontier and pushes no complete arm off it, as it
    never outranks one (its surviving seeds may be its lucky ones)."""
    flags = [True] * len(points) if complete is None else list(complete)
    if len(flags) != len(points):
        raise ValueError(f"{len(points)} points but {len(flags)} completeness flags")
    finite = [(float(c), float(s)) if done and c is not None and s is not None and math.isfinite(c)
              and math.isfinite(s) else None for (c, s), done in zip(points, flags, strict=True)]
    present = [p for p in finite if p is not None]
    return [p is not None and not any(dominates(other, p) for other in present) for p in finite]

"""``leaderboard.csv``: one row per arm of each task, ranked by the verdict.

One model for every leaderboard: the driver writes leaderboard.csv with it
(:mod:`trace_bench.store.leaderboard` builds the rows), and the analysis layer's ``leaderboard()``,
report.html, ``trace-bench table`` and the UI read the same rows and columns.
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import ConfigDict, Field

from trace_bench.store.models._base import StoreModel


class LeaderboardRow(StoreModel):
    """One arm = (task, trainer, params_label) of a run, over its seeds.  The CSV has no version
    column: its header is its contract (:data:`LEADERBOARD_COLUMNS`).  Version 2 ranks by the
    verdict's paired test (ties share a rank), names the compared score ``metric`` (was
    ``ranked_on``), keeps the interval inside the score's range and adds ``vs_best``, ``p_vs_best``,
    ``no_variance`` and ``mode``."""

    model_config = ConfigDict(frozen=True, defer_build=True)
    SCHEMA_VERSION: ClassVar[int] = 2
    FILE: ClassVar[str] = "leaderboard.csv"

    task: str = Field(description="the task's label (results.csv `task_label`: one task under one set of eval_kwargs)")
    suite: str = ""
    rank: int | None = Field(default=None, description="1 + the number of arms the verdict finds better; every arm "
                             "it cannot separate from the best shares rank 1; incomplete arms rank after the "
                             "complete ones; empty for an arm with no scored seed")
    trainer: str
    params_label: str
    metric: str = Field(description="the score compared: `test_best` (held-out test score of the best state) where "
                        "the task has a test split, else `best` (the selection split: optimistic)")
    vs_best: str = Field(default="", description="the verdict against the task's best arm: `best` (that arm), "
                         "`tied` (not separated), `below` or `above` (separated); empty without a score")
    p_vs_best: float | None = Field(default=None, description="Holm-adjusted p-value of the paired test against "
                                    "the best arm (empty for the best arm itself)")
    count: int = Field(default=0, description="scored seeds: status ok or budget_exhausted with a score_best")
    failed: int = 0
    planned: int = 0
    complete: bool = False
    mean: float | None = None
    std: float | None = None
    ci95_low: float | None = Field(default=None, description="two-sided 95 % Student-t interval of the mean, cut to "
                                   "the task's declared score range")
    ci95_high: float | None = None
    no_variance: bool = Field(default=False, description="two or more seeds and all the same score: no variance "
                              "between seeds (the interval has no width, which is not certainty)")
    mean_best: float | None = None
    std_best: float | None = None
    mean_test: float | None = None
    mean_test_last: float | None = None
    mean_initial: float | None = None
    mean_llm_calls: float | None = None
    mean_tokens: float | None = None
    mean_cost_usd: float | None = None
    mode: str = Field(default="", description="`stub` or `real`: in stub mode tokens are the stub's and USD is 0")
    mean_budget_used: float | None = Field(default=None, description="mean share of its budget a job of the arm "
                                           "spent (results.csv `budget_used`); empty without a budget")
    under_spent: int | None = Field(default=None, description="jobs of the arm that left more than 10 % of their "
                                    "budget unspent; empty without a budget")
    under_spent_reasons: str = Field(default="", description="their reasons' codes (`error`, `reservation`, "
                                     "`trainer_rule`, `knob`), comma-separated; results.csv says each in full")
    frontier_axis: str = ""
    on_frontier: bool = False


LEADERBOARD_COLUMNS: tuple[str, ...] = tuple(name for name in LeaderboardRow.model_fields if name != "schema_version")

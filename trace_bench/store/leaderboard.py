"""The rows of every leaderboard, from the scores of each arm's jobs: leaderboard.csv (the driver),
``trace_bench.analysis.stats.leaderboard`` (report.html, ``table``, the UI) and the CLI summary.

Plain Python (the driver writes leaderboard.csv without the ``analysis`` extra).  Per task (a task
label): the score compared is the task's ``metric`` (:func:`~trace_bench.store.ranking.task_metric`:
the held-out test score of the best state where some scored job has one, else the selection split's
best, optimistic); each arm's mean, sample std and 95 % Student-t interval cut to the task's declared
score range; the pairs of arms decided by the verdict's paired test (:mod:`trace_bench.store.paired`)
and the ranks that follow from them (:func:`~trace_bench.store.ranking.verdict_ranks`); cost per job
over every job that ran (a failed job spent too) and the cost–quality frontier
(:mod:`trace_bench.store.frontier`).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trace_bench.store.frontier import cost_axis, on_frontier
from trace_bench.store.models import Arm, JobResult, Spend
from trace_bench.store.models.leaderboard import LeaderboardRow
from trace_bench.store.paired import ALPHA, PairDecision, decide_pairs, decision_map
from trace_bench.store.ranking import (
    DEFAULT_METRIC,
    METRIC_FIELDS,
    TIE_TOLERANCE,
    best_arm,
    task_metric,
    verdict_ranks,
)
from trace_bench.store.stats import ScoreRange, summarize
from trace_bench.store.status import RAN, SUCCESSFUL

#: leaderboard.csv's column of each cost axis (``frontier_axis`` names one)
AXIS_COLUMNS = {Spend.COST: "mean_cost_usd", "tokens": "mean_tokens", "llm_calls": "mean_llm_calls"}


@dataclass(frozen=True)
class ArmJob:
    """What a leaderboard needs of one job of an arm."""

    seed: int
    suite: str = ""
    scored: bool = False
    ran: bool = True
    best: float | None = None
    test_best: float | None = None
    test_last: float | None = None
    initial: float | None = None
    llm_calls: float = 0.0
    tokens: float = 0.0
    cost_usd: float = 0.0
    score_range: ScoreRange | None = None
    mode: str = ""
    budget_used: float | None = None
    under_spent_reason: str = ""

    @classmethod
    def of(cls, record: JobResult) -> ArmJob:
        declared = record.score_range
        return cls(record.spec.seed, record.spec.suite, record.status in SUCCESSFUL and record.score_best is not None,
                   record.status in RAN, record.score_best, record.score_test_best, record.score_test_last,
                   record.score_initial, record.llm_calls, record.total_tokens, record.cost_usd,
                   (declared[0], declared[1]) if declared and len(declared) == 2 else None, record.spec.mode,
                   record.budget_used, record.under_spent_reason)

    def get(self, metric: str) -> float | None:
        """The score a metric names (``METRIC_FIELDS``)."""
        return {"score_best": self.best, "score_test_best": self.test_best,
                "score_test_last": self.test_last}[METRIC_FIELDS[metric]]


def _mean(values: Iterable[float | None]) -> float | None:
    clean = [v for v in values if v is not None]
    return sum(clean) / len(clean) if clean else None


def arm_scores(members: Sequence[ArmJob], metric: str) -> dict[int, float]:
    """{seed: score} of an arm's scored jobs on ``metric`` (what the paired test pairs)."""
    return {m.seed: value for m in members if m.scored and (value := m.get(metric)) is not None}


def _row(arm: Arm, members: Sequence[ArmJob], planned: int, metric: str, score_range: ScoreRange | None,
         ) -> dict[str, Any]:
    scored, ran = [m for m in members if m.scored], [m for m in members if m.ran]
    n, mean, std, low, high = summarize([v for m in scored if (v := m.get(metric)) is not None], score_range)
    _, mean_best, std_best, _, _ = summarize([m.best for m in scored if m.best is not None])
    return {"task": arm.task, "suite": members[0].suite if members else arm.task.split(":", 1)[0],
            "trainer": arm.trainer, "params_label": arm.params_label, "metric": metric, "count": len(scored),
            "failed": len(members) - len(scored), "planned": max(planned, len(members)),
            "complete": len(scored) == max(planned, len(members)) > 0, "mean": mean, "std": std, "ci95_low": low,
            "ci95_high": high, "no_variance": n >= 2 and std is not None and std <= TIE_TOLERANCE,
            "mean_best": mean_best, "std_best": std_best, "mean_test": _mean(m.test_best for m in scored),
            "mean_test_last": _mean(m.test_last for m in scored), "mean_initial": _mean(m.initial for m in scored),
            "mean_llm_calls": _mean(float(m.llm_calls) for m in ran), "mean_tokens": _mean(float(m.tokens) for m in ran),
            "mean_cost_usd": _mean(m.cost_usd for m in ran), "mode": next((m.mode for m in members if m.mode), ""),
            **_spend_columns(ran)}


def _spend_columns(ran: Sequence[ArmJob]) -> dict[str, Any]:
    """How fully the arm's jobs spent their budget: the mean share, how many left over 10 % unspent
    and their reasons' codes (see :mod:`trace_bench.store.models.budget_use`)."""
    reasons = [m.under_spent_reason for m in ran if m.under_spent_reason]
    codes = sorted({reason.split(":", 1)[0] for reason in reasons})
    return {"mean_budget_used": _mean(m.budget_used for m in ran),
            "under_spent": len(reasons) if any(m.budget_used is not None for m in ran) else None,
            "under_spent_reasons": ",".join(codes)}


def task_decisions(arms: Mapping[Arm, Sequence[ArmJob]], metric: str, alpha: float = ALPHA) -> list[PairDecision]:
    """The verdict's decisions on every pair of one task's arms (each named by :attr:`Arm.label`)."""
    return decide_pairs({arm.label: arm_scores(members, metric) for arm, members in arms.items()}, alpha)


def leaderboard_rows(arms: Mapping[Arm, Sequence[ArmJob]], planned: Mapping[Arm, int] | None = None,
                     metric: str = DEFAULT_METRIC, alpha: float = ALPHA) -> list[LeaderboardRow]:
    """Per task, its arms ranked by the verdict (see the module docstring), tasks alphabetically, arms
    by rank, then mean, unranked last.  ``planned``: the seeds each arm planned (an arm none of whose
    jobs ended yet is listed too, with count 0)."""
    planned = planned or {}
    everything: dict[Arm, Sequence[ArmJob]] = {**{arm: [] for arm in planned}, **arms}
    by_task: dict[str, dict[Arm, Sequence[ArmJob]]] = defaultdict(dict)
    for arm, members in everything.items():
        by_task[arm.task][arm] = members
    rows: list[LeaderboardRow] = []
    for task in sorted(by_task):
        rows += _task_rows(by_task[task], planned, metric, alpha)
    return rows


def _task_rows(arms: Mapping[Arm, Sequence[ArmJob]], planned: Mapping[Arm, int], metric: str,
               alpha: float) -> list[LeaderboardRow]:
    members_all = [m for members in arms.values() for m in members]
    used = task_metric(any(m.scored and m.get(metric) is not None for m in members_all), metric)
    score_range = next((m.score_range for m in members_all if m.score_range is not None), None)
    keys = list(arms)
    rows = [_row(arm, arms[arm], planned.get(arm, 0), used, score_range) for arm in keys]
    decided = decision_map(task_decisions(arms, used, alpha))

    def outcome(i: int, j: int) -> str:
        found = decided.get(frozenset((keys[i].label, keys[j].label)))
        return "tied" if found is None else found.for_arm(keys[i].label)

    means = [row["mean"] for row in rows]
    complete = [bool(row["complete"]) for row in rows]
    ranks = verdict_ranks(means, complete, outcome)
    best = best_arm(means, complete)
    axis = cost_axis((m.llm_calls, m.tokens, m.cost_usd) for m in members_all if m.ran)
    fronts = on_frontier([(row[AXIS_COLUMNS[axis]], row["mean"]) for row in rows], complete)
    for index, row in enumerate(rows):
        row.update(rank=ranks[index], frontier_axis=axis, on_frontier=fronts[index])
        if best is not None and row["mean"] is not None:
            versus = decided.get(frozenset((keys[index].label, keys[best].label)))
            if index == best:
                row["vs_best"] = "best"
            elif versus is not None:
                row["vs_best"] = {"better": "above", "worse": "below", "tied": "tied"}[versus.for_arm(keys[index].label)]
                row["p_vs_best"] = versus.p_holm if versus.p_holm == versus.p_holm else None
    ordered = sorted(rows, key=lambda r: (r["rank"] is None, r["rank"] or 0, -(r["mean"] or 0.0), r["trainer"],
                                          r["params_label"]))
    return [LeaderboardRow.model_validate(row) for row in ordered]

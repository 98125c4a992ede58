"""results.csv, summary.json and leaderboard.csv, rebuilt from per-job results.json records.

The driver keeps every job's record (loaded once from disk when resuming), replaces a job's record
when it finishes again, and rewrites the tables from that map, so a resumed run never holds
duplicate or stale rows.  Records are kept as JSON text and parsed one at a time while the tables
are written (a 100,000-job run holds ~1.4 KB per job, not a parsed record's ~5 KB), and results.csv
is streamed to disk.  Rewrites are throttled so that they take at most a tenth of the driver's time
(at least ``min_interval_s`` apart); a final write happens at the end.  Obtain one from
:meth:`trace_bench.store.RunStore.tables`.
"""

from __future__ import annotations

import csv
import io
import time
from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict, get_type_hints

from trace_bench.store.atomic import write_json, write_text, write_text_chunks
from trace_bench.store.columns import Kind, cell, header, kind_of, objective_columns, result_row
from trace_bench.store.frontier import cost_axis, on_frontier
from trace_bench.store.jsonio import loads
from trace_bench.store.models import CSV_COLUMNS, Arm, JobResult, Summary
from trace_bench.store.ranking import DEFAULT_METRIC, METRIC_FIELDS, arm_ranks, task_metric
from trace_bench.store.results_index import LazyResult, loaded
from trace_bench.store.stats import summarize
from trace_bench.store.status import RAN, SUCCESSFUL


class LeaderboardRow(TypedDict):
    """A row of leaderboard.csv: one arm of one task (its columns, in order, and their types)."""

    task: str
    suite: str
    rank: int | None
    trainer: str
    params_label: str
    ranked_on: str
    count: int
    failed: int
    planned: int
    complete: bool
    mean: float | None
    std: float | None
    ci95_low: float | None
    ci95_high: float | None
    mean_best: float | None
    std_best: float | None
    mean_test: float | None
    mean_test_last: float | None
    mean_initial: float | None
    mean_llm_calls: float | None
    mean_tokens: float | None
    mean_cost_usd: float | None
    frontier_axis: str
    on_frontier: bool


LEADERBOARD_TYPES: dict[str, Kind] = {name: kind_of(hint) for name, hint in get_type_hints(LeaderboardRow).items()}
LEADERBOARD_COLUMNS: tuple[str, ...] = tuple(LEADERBOARD_TYPES)
#: leaderboard.csv's column of each cost axis (``frontier_axis`` names one)
_AXIS_COLUMNS: dict[str, Literal["mean_cost_usd", "mean_tokens", "mean_llm_calls"]] = {
    "usd": "mean_cost_usd", "tokens": "mean_tokens", "llm_calls": "mean_llm_calls"}


def _mean(values: list[float]) -> float | None:
    clean = [v for v in values if v is not None]
    return sum(clean) / len(clean) if clean else None


class ResultTables:
    """In-memory map of job records → the run's tables."""

    def __init__(self, results_csv: Path, summary: Path, leaderboard: Path, run_meta: dict[str, Any],
                 min_interval_s: float = 1.0) -> None:
        self.results_csv, self.summary_path, self.leaderboard = results_csv, summary, leaderboard
        self.run_meta = run_meta
        self.records: dict[str, JobResult | LazyResult] = {}
        self.order: dict[str, int] = {}
        self.planned: dict[Arm, int] = {}
        self.min_interval_s = min_interval_s
        self._next_write = 0.0
        self._dirty = False

    def set_order(self, job_ids: list[str]) -> None:
        self.order = {job_id: i for i, job_id in enumerate(job_ids)}

    def set_planned(self, arms: Iterable[Arm]) -> None:
        """The arm of each of the run's planned jobs: how many seeds each arm planned, so an arm
        with missing seeds is known to be incomplete."""
        self.planned = defaultdict(int)
        for arm in arms:
            self.planned[arm] += 1

    def add(self, record: JobResult | LazyResult) -> None:
        self.records[record.job_id] = record if isinstance(record, LazyResult) else LazyResult.of(record)
        self._dirty = True

    @property
    def dirty(self) -> bool:
        """Whether a record was added since the tables were last written."""
        return self._dirty

    def maybe_write(self) -> None:
        if self._dirty and time.monotonic() >= self._next_write:
            self.write()

    def current_on_disk(self) -> bool:
        """Whether the files already hold these records' tables: the caller knows no record changed
        since they were written (a resume that ran nothing, every record from the results index),
        and the files are complete and in this version's layout (an older run's are rewritten)."""
        try:
            summary = loads(self.summary_path.read_text(encoding="utf-8"))
            with open(self.results_csv, encoding="utf-8") as handle:
                csv_header = handle.readline()
            with open(self.leaderboard, encoding="utf-8") as handle:
                board_header = handle.readline()
        except (OSError, ValueError):
            return False
        return (isinstance(summary, dict) and summary.get("schema_version") == Summary.SCHEMA_VERSION
                and summary.get("finished_jobs") == len(self.records)
                and summary.get("total_jobs") == self.run_meta.get("total_jobs", len(self.records))
                and csv_header.startswith(",".join(CSV_COLUMNS)) and board_header == ",".join(LEADERBOARD_COLUMNS) + "\n")

    def sorted_records(self) -> list[JobResult | LazyResult]:
        return sorted(self.records.values(), key=lambda r: (self.order.get(r.job_id, 1 << 30), r.job_id))

    def counts(self) -> dict[str, int]:
        """Jobs per status (what ``summary.json`` counts), without parsing any record."""
        counts: dict[str, int] = defaultdict(int)
        for record in self.records.values():
            counts[str(record.status)] += 1
        return dict(sorted(counts.items()))

    def write(self) -> None:
        """All three tables in one pass over the records, each parsed once and dropped."""
        started = time.monotonic()
        ordered = self.sorted_records()
        objectives = objective_columns(ordered)
        totals = _Totals()  # the summary and the leaderboard keep only what they need of each record
        arms: dict[Arm, list[_Scores]] = defaultdict(list)

        def rows() -> Iterator[str]:
            buffer = io.StringIO()
            writer = csv.writer(buffer, lineterminator="\n")
            writer.writerow(header(objectives))
            for index, lazy in enumerate(ordered):
                record = loaded(lazy)
                totals.add(record)
                arms[record.arm].append(_Scores.of(record))
                writer.writerow(result_row(record, objectives))
                if index % 512 == 511:
                    yield buffer.getvalue()
                    buffer.seek(0)
                    buffer.truncate()
            yield buffer.getvalue()

        write_text_chunks(self.results_csv, rows())
        write_json(self.summary_path, totals.summary(self.run_meta, len(ordered)).record(), durable=True)
        self._write_leaderboard(arms, self.planned)
        now = time.monotonic()
        self._next_write = now + max(self.min_interval_s, 9 * (now - started))
        self._dirty = False

    def summary(self, records: list[JobResult]) -> Summary:
        totals = _Totals()
        for record in records:
            totals.add(record)
        return totals.summary(self.run_meta, len(records))

    @staticmethod
    def leaderboard_rows(arms: dict[Arm, list[_Scores]], planned: dict[Arm, int] | None = None,
                         metric: str = DEFAULT_METRIC) -> list[LeaderboardRow]:
        """Per task (a task label: one task under one eval_kwargs), arms ranked by the mean of the
        task's ranking metric (``ranked_on``): a held-out test score where some scored job of the task
        has one, else the best selection score.  Complete arms (every planned seed scored) come
        before incomplete ones (``complete`` false; ``count`` of ``planned`` seeds scored).
        ``mean_llm_calls``, ``mean_tokens``, ``mean_cost_usd``: the cost per job over every job of
        the arm that ran, failed ones included.  ``on_frontier``: the arm is on the task's
        cost–quality frontier (that mean against the mean trainer-phase cost on ``frontier_axis``, see :mod:`trace_bench.store.frontier`); an
        incomplete arm never is, and its ``complete`` false says why."""
        planned = planned or {}
        arms = {**{arm: [] for arm in planned}, **arms}  # an arm none of whose jobs ended yet is listed too
        scored_by_arm = {arm: [m for m in members if m.scored] for arm, members in arms.items()}
        # cost per job: every job that ran (a failed job spent too), not only the scored ones
        ran_by_arm = {arm: [m for m in members if m.ran] for arm, members in arms.items()}
        held_out = {arm[0] for arm, scored in scored_by_arm.items() if any(m.get(metric) is not None for m in scored)}
        rows: list[LeaderboardRow] = []
        for arm, members in arms.items():
            task, trainer, label = arm
            scored, ran = scored_by_arm[arm], ran_by_arm[arm]
            ranked_on = task_metric(task in held_out, metric)
            n, mean, std, low, high = summarize([v for m in scored if (v := m.get(ranked_on)) is not None])
            _, mean_best, std_best, _, _ = summarize([m.best for m in scored])  # type: ignore[misc]
            rows.append({
                "task": task, "suite": members[0].suite if members else task.split(":", 1)[0], "rank": None,
                "trainer": trainer, "params_label": label,
                "ranked_on": ranked_on, "count": len(scored), "failed": len(members) - len(scored),
                "planned": max(planned.get(Arm(task, trainer, label), 0), len(members)), "complete": False,
                "mean": mean, "std": std, "ci95_low": low, "ci95_high": high,
                "mean_best": mean_best, "std_best": std_best,
                "mean_test": _mean([m.test_best for m in scored]),  # type: ignore[misc]
                "mean_test_last": _mean([m.test_last for m in scored]),  # type: ignore[misc]
                "mean_initial": _mean([m.initial for m in scored]),  # type: ignore[misc]
                "mean_llm_calls": _mean([float(m.llm_calls) for m in ran]),
                "mean_tokens": _mean([float(m.tokens) for m in ran]),
                "mean_cost_usd": _mean([m.cost_usd for m in ran]), "frontier_axis": "", "on_frontier": False,
            })
        by_task: dict[str, list[LeaderboardRow]] = defaultdict(list)
        for row in rows:
            by_task[row["task"]].append(row)
        for row in rows:
            row["complete"] = row["count"] == row["planned"] > 0
        axes = {task: cost_axis((m.llm_calls, m.tokens, m.cost_usd) for (t, _, _), ran in ran_by_arm.items()
                                if t == task for m in ran) for task in by_task}
        ranked: list[LeaderboardRow] = []
        for task in sorted(by_task):
            entries = by_task[task]
            column = _AXIS_COLUMNS[axes[task]]
            fronts = on_frontier([(r[column], r["mean"]) for r in entries], [r["complete"] for r in entries])
            for row, front in zip(entries, fronts, strict=True):
                row["frontier_axis"], row["on_frontier"] = axes[task], front
            ranks = arm_ranks([r["mean"] for r in entries], [r["complete"] for r in entries])
            for row, rank in zip(entries, ranks, strict=True):
                row["rank"] = rank
            ranked += sorted(entries, key=lambda r: (r["rank"] is None, r["rank"] or 0, r["trainer"],
                                                     r["params_label"]))
        return ranked

    def _write_leaderboard(self, arms: dict[Arm, list[_Scores]], planned: dict[Arm, int]) -> None:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(LEADERBOARD_COLUMNS)
        for row in self.leaderboard_rows(arms, planned):
            writer.writerow([cell(row[c]) for c in LEADERBOARD_COLUMNS])  # type: ignore[literal-required]
        write_text(self.leaderboard, buffer.getvalue())


@dataclass(frozen=True)
class _Scores:
    """What the leaderboard needs of one job."""

    suite: str
    scored: bool
    ran: bool
    best: float | None
    test_best: float | None
    test_last: float | None
    initial: float | None
    llm_calls: int
    tokens: int
    cost_usd: float

    @classmethod
    def of(cls, record: JobResult) -> _Scores:
        return cls(record.spec.suite, record.status in SUCCESSFUL and record.score_best is not None,
                   record.status in RAN, record.score_best,
                   record.score_test_best, record.score_test_last, record.score_initial, record.llm_calls,
                   record.total_tokens, record.cost_usd)

    def get(self, metric: str) -> float | None:
        """The score a ranking metric names (``METRIC_FIELDS``)."""
        return {"score_best": self.best, "score_test_best": self.test_best,
                "score_test_last": self.test_last}[METRIC_FIELDS[metric]]


@dataclass
class _Totals:
    """What summary.json sums over the jobs."""

    counts: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    prompt: int = 0
    completion: int = 0
    total: int = 0
    estimated: bool = False
    llm_calls: int = 0
    cache_hits: int = 0
    cost_usd: float = 0.0
    seconds: float = 0.0
    sandbox: dict[str, int] = field(default_factory=lambda: defaultdict(int))

    def add(self, record: JobResult) -> None:
        self.counts[str(record.status)] += 1
        if record.sandbox:
            self.sandbox[record.sandbox] += 1
        self.prompt += record.prompt_tokens
        self.completion += record.completion_tokens
        self.total += record.total_tokens
        self.estimated = self.estimated or record.tokens_estimated
        self.llm_calls += record.llm_calls
        self.cache_hits += record.cache_hits
        self.cost_usd += record.cost_usd
        self.seconds += record.time_seconds

    def summary(self, run_meta: dict[str, Any], finished: int) -> Summary:
        return Summary.model_validate({
            **run_meta,
            "total_jobs": run_meta.get("total_jobs", finished),
            "finished_jobs": finished,
            "counts": dict(sorted(self.counts.items())),
            "token_totals": {"prompt": self.prompt, "completion": self.completion, "total": self.total},
            "tokens_estimated": self.estimated,
            "llm_calls": self.llm_calls,
            "cache_hits": self.cache_hits,
            "cost_usd": round(self.cost_usd, 10),
            "job_seconds": round(self.seconds, 6),
            "sandbox": dict(sorted(self.sandbox.items())),
        })

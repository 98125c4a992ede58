"""results.csv, summary.json and leaderboard.csv, rebuilt from per-job results.json records.

The driver keeps every job's record in memory (loaded once from disk when resuming), replaces
a job's record when it finishes again, and rewrites the tables from that map, so a resumed run
never holds duplicate or stale rows.  Rewrites are throttled; a final write happens at the end.
Obtain one from :meth:`trace_bench.store.RunStore.tables`.
"""

from __future__ import annotations

import csv
import io
import json
import math
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from trace_bench.store.atomic import write_json, write_text
from trace_bench.store.jsonio import loads
from trace_bench.store.legacy_columns import legacy_values
from trace_bench.store.models import CSV_COLUMNS, LEGACY_CSV_COLUMNS, JobResult, Summary
from trace_bench.store.ranking import DEFAULT_METRIC, METRIC_FIELDS, competition_ranks, task_metric
from trace_bench.store.results_index import LazyResult, loaded
from trace_bench.store.stats import summarize
from trace_bench.store.status import SUCCESSFUL

LEADERBOARD_COLUMNS = (
    "task", "suite", "rank", "trainer", "params_label", "ranked_on", "count", "failed", "mean", "std",
    "ci95_low", "ci95_high", "mean_best", "std_best", "mean_test", "mean_test_last", "mean_initial",
    "mean_llm_calls", "mean_tokens", "mean_cost_usd",
)


def _cell(value: Any) -> Any:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, default=str)
    return value


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
        self.min_interval_s = min_interval_s
        self._last_write = 0.0
        self._dirty = False

    def set_order(self, job_ids: list[str]) -> None:
        self.order = {job_id: i for i, job_id in enumerate(job_ids)}

    def add(self, record: JobResult | LazyResult) -> None:
        self.records[record.job_id] = record
        self._dirty = True

    def maybe_write(self) -> None:
        if self._dirty and time.monotonic() - self._last_write >= self.min_interval_s:
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
        records = [loaded(record) for record in self.sorted_records()]  # parsed for the write only
        self._write_csv(records)
        write_json(self.summary_path, self.summary(records).record(), durable=True)
        self._write_leaderboard(records)
        self._last_write = time.monotonic()
        self._dirty = False

    def _objective_columns(self, records: list[JobResult]) -> list[str]:
        names = sorted({k for r in records for k in r.score_dict_best if k != "score"})
        return [f"obj_{name}" for name in names]

    def _write_csv(self, records: list[JobResult]) -> None:
        objectives = self._objective_columns(records)
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow([*CSV_COLUMNS, *objectives, *LEGACY_CSV_COLUMNS])
        for record in records:
            data = record.model_dump(mode="json")
            row = [_cell(data.get(column)) for column in CSV_COLUMNS]
            row += [_cell(record.score_dict_best.get(name[4:])) for name in objectives]
            legacy = legacy_values(record)
            row += [_cell(legacy[column]) for column in LEGACY_CSV_COLUMNS]
            writer.writerow(row)
        write_text(self.results_csv, buffer.getvalue())

    def summary(self, records: list[JobResult]) -> Summary:
        counts: dict[str, int] = defaultdict(int)
        for record in records:
            counts[str(record.status)] += 1
        total = {
            "prompt": sum(r.prompt_tokens for r in records),
            "completion": sum(r.completion_tokens for r in records),
            "total": sum(r.total_tokens for r in records),
        }
        return Summary.model_validate({
            **self.run_meta,
            "total_jobs": self.run_meta.get("total_jobs", len(records)),
            "finished_jobs": len(records),
            "counts": dict(sorted(counts.items())),
            "token_totals": total,
            "tokens_estimated": any(r.tokens_estimated for r in records),
            "llm_calls": sum(r.llm_calls for r in records),
            "cache_hits": sum(r.cache_hits for r in records),
            "cost_usd": round(sum(r.cost_usd for r in records), 10),
            "job_seconds": round(sum(r.time_seconds for r in records), 6),
        })

    def leaderboard_rows(self, records: list[JobResult], metric: str = DEFAULT_METRIC) -> list[dict[str, Any]]:
        """Per task, arms ranked by the mean of the task's ranking metric (``ranked_on``): a held-out
        test score where some scored job of the task has one, else the best selection score."""
        groups: dict[tuple[str, str, str], list[JobResult]] = defaultdict(list)
        for record in records:
            groups[(record.task, record.trainer, record.params_label)].append(record)
        scored_by_arm = {arm: [m for m in members if m.status in SUCCESSFUL and m.score_best is not None]
                         for arm, members in groups.items()}
        field = METRIC_FIELDS[metric]
        held_out = {arm[0] for arm, scored in scored_by_arm.items() if any(getattr(m, field) is not None
                                                                            for m in scored)}
        rows = []
        for (task, trainer, label), members in groups.items():
            scored = scored_by_arm[(task, trainer, label)]
            ranked_on = task_metric(task in held_out, metric)
            values = [getattr(m, METRIC_FIELDS[ranked_on]) for m in scored]
            n, mean, std, low, high = summarize([v for v in values if v is not None])
            _, mean_best, std_best, _, _ = summarize([m.score_best for m in scored])  # type: ignore[misc]
            rows.append({
                "task": task, "suite": members[0].suite, "trainer": trainer, "params_label": label,
                "ranked_on": ranked_on, "count": len(scored), "failed": len(members) - len(scored),
                "mean": mean, "std": std, "ci95_low": low, "ci95_high": high,
                "mean_best": mean_best, "std_best": std_best,
                "mean_test": _mean([m.score_test_best for m in scored]),  # type: ignore[misc]
                "mean_test_last": _mean([m.score_test_last for m in scored]),  # type: ignore[misc]
                "mean_initial": _mean([m.score_initial for m in scored]),  # type: ignore[misc]
                "mean_llm_calls": _mean([float(m.llm_calls) for m in scored]),
                "mean_tokens": _mean([float(m.total_tokens) for m in scored]),
                "mean_cost_usd": _mean([m.cost_usd for m in scored]),
            })
        by_task: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for row in rows:
            by_task[row["task"]].append(row)
        ranked: list[dict[str, Any]] = []
        for task in sorted(by_task):
            entries = by_task[task]
            for row, rank in zip(entries, competition_ranks([r["mean"] for r in entries]), strict=True):
                row["rank"] = rank
            ranked += sorted(entries, key=lambda r: (r["rank"] is None, r["rank"] or 0, r["trainer"],
                                                     r["params_label"]))
        return ranked

    def _write_leaderboard(self, records: list[JobResult]) -> None:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(LEADERBOARD_COLUMNS)
        for row in self.leaderboard_rows(records):
            writer.writerow([_cell(row.get(c)) for c in LEADERBOARD_COLUMNS])
        write_text(self.leaderboard, buffer.getvalue())

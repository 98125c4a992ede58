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
from typing import Any

from trace_bench.store.atomic import write_json, write_text, write_text_chunks
from trace_bench.store.columns import Kind, cell, header, kind_of, objective_columns, result_row
from trace_bench.store.jsonio import loads
from trace_bench.store.leaderboard import ArmJob, leaderboard_rows
from trace_bench.store.models import CSV_COLUMNS, Arm, JobResult, Summary
from trace_bench.store.models.leaderboard import LEADERBOARD_COLUMNS, LeaderboardRow
from trace_bench.store.results_index import LazyResult, loaded

LEADERBOARD_TYPES: dict[str, Kind] = {name: kind_of(info.annotation) for name, info in LeaderboardRow.model_fields.items()
                                     if name in LEADERBOARD_COLUMNS}


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
        arms: dict[Arm, list[ArmJob]] = defaultdict(list)

        def rows() -> Iterator[str]:
            buffer = io.StringIO()
            writer = csv.writer(buffer, lineterminator="\n")
            writer.writerow(header(objectives))
            for index, lazy in enumerate(ordered):
                record = loaded(lazy)
                totals.add(record)
                arms[record.arm].append(ArmJob.of(record))
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

    def _write_leaderboard(self, arms: dict[Arm, list[ArmJob]], planned: dict[Arm, int]) -> None:
        buffer = io.StringIO()
        writer = csv.writer(buffer, lineterminator="\n")
        writer.writerow(LEADERBOARD_COLUMNS)
        for row in leaderboard_rows(arms, planned):
            writer.writerow([cell(getattr(row, c)) for c in LEADERBOARD_COLUMNS])
        write_text(self.leaderboard, buffer.getvalue())


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

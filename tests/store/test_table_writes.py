"""The tables are rewritten while a run goes, but never at the cost of the run: writes take at most
a tenth of the driver's time, so a 100,000-job run does not spend its life rewriting results.csv."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from trace_bench.store import tables as tables_module
from trace_bench.store.models import JobResult
from trace_bench.store.tables import ResultTables


def _record(job_id: str) -> JobResult:
    return JobResult(run_id="r", job_id=job_id, task="s:t", suite="s", trainer="T", seed=1, mode="stub",
                     status="ok", score_best=1.0)


def test_a_slow_write_spaces_the_next_ones(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    clock = iter([100.0, 102.0])  # the write starts at 100 s and takes 2 s
    monkeypatch.setattr(tables_module.time, "monotonic", lambda: next(clock))
    tables = ResultTables(tmp_path / "results.csv", tmp_path / "summary.json", tmp_path / "leaderboard.csv", {"run_id": "r"},
                          min_interval_s=1.0)
    tables.add(_record("a"))
    tables.write()
    writes = []
    monkeypatch.setattr(tables, "write", lambda: writes.append(True))
    tables.add(_record("b"))
    for now, expected in ((103.0, 0), (119.0, 0), (120.5, 1)):  # 9 x 2 s after the write ended
        monkeypatch.setattr(tables_module.time, "monotonic", lambda now=now: now)
        tables.maybe_write()
        assert len(writes) == expected, now


def test_records_are_kept_as_text_and_the_tables_match_them(tmp_path: Path) -> None:
    tables = ResultTables(tmp_path / "results.csv", tmp_path / "summary.json", tmp_path / "leaderboard.csv",
                          {"run_id": "r", "total_jobs": 2})
    first, second = _record("a"), _record("b").model_copy(update={"score_best": 3.0, "score_dict_best": {"acc": 0.5}})
    tables.add(first)
    tables.add(second)
    assert all(type(r).__name__ == "LazyResult" for r in tables.records.values())
    tables.write()
    header, *rows = (tmp_path / "results.csv").read_text().splitlines()
    assert "obj_acc" in header.split(",") and len(rows) == 2
    assert tables.records["b"].load() == second
    with open(tmp_path / "leaderboard.csv", encoding="utf-8") as handle:
        [row] = list(csv.DictReader(handle))
    assert row["mean"] == "2.0", "mean of 1.0 and 3.0"

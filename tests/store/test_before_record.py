"""A run written before the one frozen job record (flat records: JobResult version 4, JobMeta
version 3, manifest version 3) keeps loading and keeps its tables: rebuilt by today's code they are
the same bytes, every layer reads it, and a resume completes it in place."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import FIXTURES, run_cli
from trace_bench.store.models import JobResult
from trace_bench.store.run_store import RunStore

BEFORE = FIXTURES / "runs_before_record"
COST_MEANS = ("mean_llm_calls", "mean_tokens", "mean_cost_usd")
RUN = BEFORE / "before-record"


@pytest.fixture
def old_run(tmp_path: Path) -> Path:
    """A copy of the run (see the config next to it): ok, failed, budget_exhausted and skipped jobs,
    a multi-objective task, two trainers and two seeds."""
    return Path(shutil.copytree(RUN, tmp_path / "runs" / "before-record"))


def _rebuild(run: Path) -> None:
    store = RunStore(run)
    manifest = store.read_manifest()
    assert manifest is not None
    meta = {"run_id": manifest.run_id, "config_hash": manifest.config_hash, "mode": manifest.mode,
            "tags": manifest.tags, "total_jobs": manifest.total_jobs, "created_at": manifest.created_at,
            "task_root": manifest.task_root}
    tables = store.tables(meta)
    tables.set_order([entry.job_id for entry in manifest.jobs])
    for record in store.read_results().values():
        tables.add(record)
    tables.write()


def _columns(path: Path) -> tuple[list[str], dict[str, list[str]]]:
    with open(path, encoding="utf-8", newline="") as handle:
        rows = list(csv.reader(handle))
    return rows[0], {name: [row[i] for row in rows[1:]] for i, name in enumerate(rows[0])}


def _arms_of(head: list[str], cells: dict[str, list[str]]) -> dict[tuple[str, ...], dict[str, str]]:
    rows = [dict(zip(head, values, strict=True)) for values in zip(*(cells[c] for c in head), strict=True)]
    return {(r["task"], r["trainer"], r["params_label"]): r for r in rows}


def _arms(path: Path) -> dict[tuple[str, ...], dict[str, str]]:
    return _arms_of(*_columns(path))


def test_tables_rebuilt_by_todays_code_keep_every_cell(old_run: Path) -> None:
    """Every column the old tables had keeps its place among them and every cell; columns added to
    the record since (the integrity audit's, the frontier's) are the only difference, and empty
    where the old records say nothing."""
    names = ("results.csv", "summary.json", "leaderboard.csv")
    before = {name: (old_run / name).read_bytes() for name in names}
    old = {name: _columns(old_run / name) for name in ("results.csv", "leaderboard.csv")}
    for name in names:
        (old_run / name).unlink()
    _rebuild(old_run)
    summary, old_summary = json.loads((old_run / "summary.json").read_text()), json.loads(before["summary.json"])
    assert {k: summary[k] for k in old_summary} == old_summary
    old_head, old_cells = old["results.csv"]
    head, cells = _columns(old_run / "results.csv")
    assert [c for c in head if c in old_cells] == old_head
    assert {c: cells[c] for c in old_head} == {c: old_cells[c] for c in old_head}
    # leaderboard.csv version 2 (the verdict's ranks: ties share a rank) renamed ranked_on to metric; every
    # other old column keeps its cells, arm by arm, but the cost per job, which averages every job that ran
    # since, failed ones too: the same where none failed
    renamed = {"ranked_on": "metric"}
    board = _arms(old_run / "leaderboard.csv")
    old_board = _arms_of(*old["leaderboard.csv"])
    assert set(board) == set(old_board)
    kept = [c for c in old["leaderboard.csv"][0] if c not in ("rank", *COST_MEANS)]
    for arm, row in old_board.items():
        assert {c: board[arm][renamed.get(c, c)] for c in kept} == {c: row[c] for c in kept}, arm
        if row["failed"] == "0":
            assert {c: board[arm][c] for c in COST_MEANS} == {c: row[c] for c in COST_MEANS}, arm
    assert any(row["failed"] != "0" for row in old_board.values())
    head, cells = _columns(old_run / "results.csv")
    added = [c for c in head if c not in old["results.csv"][1]]
    assert added and all(set(cells[c]) <= {"", "{}", "[]"} for c in added if c != "sandbox"), added


def test_every_record_loads_as_the_current_version(old_run: Path) -> None:
    store = RunStore(old_run)
    manifest = store.read_manifest()
    assert manifest is not None and len(manifest.jobs) == 16
    results = store.read_results()
    assert sorted({str(r.status) for r in results.values()}) == ["budget_exhausted", "failed", "ok", "skipped"]
    assert all(r.schema_version == JobResult.SCHEMA_VERSION for r in results.values())
    for entry in manifest.jobs:
        meta = store.job(entry.job_id).read_meta()
        assert meta is not None and meta.spec.job_id == entry.job_id == results[entry.job_id].job_id
        assert meta.spec.arm == entry.spec.arm and meta.spec.seed == entry.spec.seed  # old entries: identity only
        # an old record's spec is rebuilt from its columns: the same cell, trainer kwargs and models
        old = results[entry.job_id].spec
        assert (old.arm, old.seed, old.trainer_kwargs, old.role_models) == (
            meta.spec.arm, meta.spec.seed, meta.spec.trainer_kwargs, meta.spec.role_models)
        assert meta.status == str(results[entry.job_id].status)
        assert meta.resolved == entry.resolved == results[entry.job_id].resolved


def test_every_layer_reads_it(old_run: Path) -> None:
    pytest.importorskip("pandas")
    from trace_bench.analysis import load_runs
    from trace_bench.trackers.source import iter_jobs
    from trace_bench.ui.discovery import job_entries, run_info

    runs = load_runs(old_run)
    assert len(runs.jobs) == 16 and int(runs.jobs["scored"].sum()) == 8
    assert {"obj_base_loss", "obj_reg_loss"} <= set(runs.jobs.columns)
    info = run_info(old_run)
    assert info.state == "finished" and info.total_jobs == 16 and info.problem is None
    assert {e["status"] for e in job_entries(old_run)} == {"budget_exhausted", "failed", "ok", "skipped"}
    assert len(list(iter_jobs(old_run))) == 16


def test_a_resume_by_todays_code_completes_it_in_place(old_run: Path) -> None:
    """``--resume`` re-runs the failed and skipped jobs (their outcome repeats) and reuses the rest."""
    before = {job_id: record.record() for job_id, record in RunStore(old_run).read_results().items()
              if str(record.status) in ("ok", "budget_exhausted")}
    proc = run_cli("run", "--resume", str(old_run), "--runs-dir", str(old_run.parent))
    assert proc.returncode == 1, proc.stderr  # the non-trainable task fails again
    after = RunStore(old_run).read_results()
    assert sorted({str(r.status) for r in after.values()}) == ["budget_exhausted", "failed", "ok", "skipped"]
    for job_id, record in before.items():
        assert after[job_id].record() == record  # reused as recorded
    statuses = {str(e.status) for e in (RunStore(old_run).read_manifest() or pytest.fail("no manifest")).jobs}
    assert statuses == {"reused", "failed", "skipped"}

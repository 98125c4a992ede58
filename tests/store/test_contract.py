"""The storage contract written on ``RunStore``, checked once through its public API.

Atomic records, strict JSON, logs readable while written, exactly-once tables, one driver per run,
what a killed driver leaves, masking.  Each test names the promise it checks.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from trace_bench.store import atomic
from trace_bench.store.models import (
    CURVE_COLUMNS,
    Attempts,
    JobResult,
    LLMCall,
    Manifest,
    Step,
    StoreError,
)
from trace_bench.store.run_store import RunLocked, RunStore


def _record(job_id: str, **fields: object) -> JobResult:
    base: dict[str, object] = {"run_id": "r", "job_id": job_id, "task": "s:t", "suite": "s", "trainer": "T",
                               "seed": 1, "mode": "stub", "status": "ok", "score_best": 1.0}
    return JobResult.model_validate({**base, **fields})


def _strict(text: str) -> object:
    """Parse JSON refusing NaN/Infinity, as jq and browsers do."""
    def refuse(token: str) -> object:
        raise ValueError(f"non-standard JSON constant {token}")

    return json.loads(text, parse_constant=refuse)


def test_atomic_records_a_failed_write_leaves_the_old_version(tmp_path: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    run = RunStore.create(tmp_path, "r")
    job = run.job("j1")
    job.write_result(_record("j1", score_best=1.0))

    def disk_full(src: object, dst: object) -> None:
        raise OSError("No space left on device")

    monkeypatch.setattr(atomic.os, "replace", disk_full)
    with pytest.raises(OSError, match="No space"):
        job.write_result(_record("j1", score_best=2.0))
    monkeypatch.undo()
    assert job.read_result().score_best == 1.0  # type: ignore[union-attr]
    assert [p.name for p in job.root.iterdir()] == ["results.json"], "no temporary file left behind"


def test_strict_json_no_nan_in_any_file(tmp_path: Path) -> None:
    run = RunStore.create(tmp_path, "r")
    job = run.job("j1")
    nan, inf = float("nan"), float("inf")
    record = _record("j1", score_initial=nan, score_best=inf, score_dict_best={"accuracy": nan, "score": 1.0})
    job.write_result(record)
    tables = run.tables({"run_id": "r", "config_hash": "h", "mode": "stub"}, min_interval_s=0)
    tables.add(record)
    tables.write()
    with job.open_events() as events:
        events.write(Step(step=1, score=nan, best_score=inf))
        events.write({"type": "llm_call", "cost_usd": 0.0, "latency_s": nan})
    job.write_attempts(Attempts(attempts=1, carried={"usd": nan}))
    for path in run.root.rglob("*.json*"):
        for line in path.read_text().splitlines() if path.suffix == ".jsonl" else [path.read_text()]:
            _strict(line)
    saved = job.read_result()
    assert saved is not None
    assert saved.score_initial is None and saved.score_best is None
    assert saved.non_finite == ["score_best", "score_dict_best.accuracy", "score_initial"]
    assert saved.score_dict_best == {"accuracy": None, "score": 1.0}
    step = next(e for e in job.events() if isinstance(e, Step))
    assert step.score is None and step.best_score is None


def test_logs_are_readable_while_written_and_a_torn_line_is_skipped(tmp_path: Path) -> None:
    run = RunStore.create(tmp_path, "r")
    job = run.job("j1")
    follower = run.follow_job_events("j1")
    log = job.open_events()
    log.write(LLMCall(role="optimizer", total_tokens=10))
    assert [e.total_tokens for e in follower.new()] == [10]  # flushed per line: visible before close
    with open(job.events_path, "a", encoding="utf-8") as handle:  # a writer killed mid-line
        handle.write('{"ts": "2026", "type": "llm_call", "total_tok')
    assert follower.new() == [], "a partial line waits"
    assert len(list(job.events())) == 1, "a torn last line is skipped"
    with open(job.events_path, "a", encoding="utf-8") as handle:
        handle.write('ens": 5}\n')
    assert [e.total_tokens for e in follower.new()] == [5], "completed, it is read once"
    log.close()


def test_exactly_once_tables_are_rebuilt_from_the_records(tmp_path: Path) -> None:
    run = RunStore.create(tmp_path, "r")
    meta = {"run_id": "r", "config_hash": "h", "mode": "stub", "total_jobs": 2}
    for job_id, status in (("a", "failed"), ("b", "ok")):
        run.job(job_id).write_result(_record(job_id, status=status))
    first = run.tables(meta, min_interval_s=0)
    for record in run.read_results().values():
        first.add(record)
    first.write()
    run.job("a").write_result(_record("a", status="ok", score_best=3.0))  # a resume re-ran job a
    again = run.tables(meta, min_interval_s=0)
    for record in run.read_results().values():
        again.add(record)
    again.write()
    header, rows = run.read_results_table()  # type: ignore[misc]
    by_job = {row[header.index("job_id")]: row for row in rows}
    assert sorted(by_job) == ["a", "b"] and len(rows) == 2, "one row per job, never a duplicate"
    assert by_job["a"][header.index("status")] == "ok" and by_job["a"][header.index("score_best")] == "3.0"
    summary = run.read_summary()
    assert summary is not None and summary.counts == {"ok": 2} and summary.finished_jobs == 2


def test_one_driver_per_run_and_a_killed_driver_releases_it(tmp_path: Path) -> None:
    run = RunStore.create(tmp_path, "r")
    lock = run.lock()
    with pytest.raises(RunLocked, match="being executed by another"):
        run.lock()
    lock.release()
    holder = subprocess.Popen(
        [sys.executable, "-c", "import sys, time; from trace_bench.store.run_store import RunStore; "
         "lock = RunStore(sys.argv[1]).lock(); print('locked', flush=True); time.sleep(600)", str(run.root)],
        stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "locked"
        with pytest.raises(RunLocked):
            run.lock()
        os.kill(holder.pid, signal.SIGKILL)
    finally:
        holder.wait(30)
    run.lock().release()  # the kernel released the dead driver's lock: the run can be resumed at once


def test_a_killed_job_leaves_its_progress_for_the_driver(tmp_path: Path) -> None:
    """What a job writes as it goes is enough to rebuild its record after a kill."""
    from trace_bench.matrix.expand import JobSpec
    from trace_bench.runner.salvage import salvage_record
    from trace_bench.store.models import CurveRow

    run = RunStore.create(tmp_path, "r")
    job = run.job("j1")
    curve = job.open_curve()
    for step, score, best in ((0, -3.0, -3.0), (1, -1.0, -1.0), (2, -2.0, -1.0)):
        curve.row(CurveRow(step=step, score=score, best_score=best))
    with job.open_events() as events:
        events.write(LLMCall(role="optimizer", total_tokens=7, cost_usd=0.5, phase="train"))
        events.write(LLMCall(role="optimizer", total_tokens=3, phase="measure"))
        events.write(LLMCall(role="optimizer", total_tokens=5, cost_usd=0.25, cached=True, phase="train"))
    with open(job.curve_path, "a", encoding="utf-8") as handle:
        handle.write("3,0.1,")  # the kill tore the last row
    spec = JobSpec(job_id="j1", index=0, task="s:t", suite="s", eval_kwargs={}, trainer="T", params={},
                   params_label="default", trainer_kwargs={}, optimizer=None, optimizer_kwargs={}, seed=1,
                   mode="stub")
    record = salvage_record(spec, job, run_id="r", status="timeout", error="killed", wall_s=1.0, attempt=1)
    assert (record.score_initial, record.score_final, record.score_best, record.n_steps) == (-3.0, -2.0, -1.0, 2)
    # the job's spend is the trainer's (what the budget counts); measurement calls are apart
    assert record.llm_calls == 2 and record.total_tokens == 12 and record.cache_hits == 1
    assert (record.measure_llm_calls, record.measure_tokens) == (1, 3)
    # a cache answer is charged its recorded usage, like the session's budget charges it
    assert record.budget_spent == {"llm_calls": 2, "tokens": 12, "usd": 0.75}


def test_curve_objective_columns_round_trip(tmp_path: Path) -> None:
    """A multi-objective job's curve has one ``obj_<metric>`` column per objective named when it
    was opened, and reads back as each row's ``objectives``; readers of the fixed columns are unaffected."""
    from trace_bench.store.models import CurveRow

    job = RunStore.create(tmp_path, "r").job("j1")
    curve = job.open_curve(["cost", "quality"])
    curve.row(CurveRow(step=0, score=1.0, best_score=1.0, objectives={"cost": 2.5, "quality": 0.5}))
    curve.row(CurveRow(step=1, score=2.0, best_score=2.0, objectives={"cost": float("nan"), "quality": 0.75}))
    curve.close()
    assert job.curve_path.read_text().splitlines()[0].endswith(",best_score,measure_llm_calls,measure_tokens,measure_usd,kind,obj_cost,obj_quality")
    rows = job.read_curve()
    assert [row.objectives for row in rows] == [{"cost": 2.5, "quality": 0.5}, {"quality": 0.75}]
    header, cells = job.curve_cells()
    assert [len(row) for row in cells] == [len(CURVE_COLUMNS)] * 2 and cells[1][6] == "2.0"


def test_masked_secrets_and_unreadable_files_name_the_file(tmp_path: Path,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    secret = "sk-contract-" + "x" * 30
    monkeypatch.setenv("OPENAI_API_KEY", secret)
    run = RunStore.create(tmp_path, "r")
    run.write_manifest(Manifest(run_id="r", config_hash="h", mode="real", tags=[f"key {secret}"]))
    run.job("j").write_result(_record("j", status="failed", error=f"401 for key {secret}"))
    run.append_event({"type": "tracker_warning", "tracker": "mlflow", "error": secret})
    for path in run.root.rglob("*"):
        assert not path.is_file() or secret not in path.read_text(), path
    run.summary_path.write_text("{", encoding="utf-8")
    with pytest.raises(StoreError, match=r"summary\.json: not valid JSON"):
        run.read_summary()
    assert run.read_leaderboard() is None and run.job("nope").read_result() is None

"""Versions: a run directory written before schema version 2 still loads everywhere; a file from a
newer trace-bench is refused with a message; the committed JSON Schemas match the models."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import REPO
from tests.records import record_of
from trace_bench.store.models import (
    JobFinished,
    JobResult,
    LLMCall,
    Manifest,
    NewerSchemaError,
    RunFinished,
    StoreError,
)
from trace_bench.store.run_store import RunStore

V1_RUN = REPO / "tests" / "fixtures" / "runs_v1" / "v1-fixture"


@pytest.fixture
def v1_run(tmp_path: Path) -> Path:
    """A copy of a run written by trace-bench before the store versioned its records (see the
    fixture's config next to it): one budget_exhausted, one failed and one skipped job."""
    return Path(shutil.copytree(V1_RUN, tmp_path / "v1-fixture"))


def test_every_file_of_a_version_1_run_loads_as_the_current_version(v1_run: Path) -> None:
    run = RunStore(v1_run)
    manifest = run.read_manifest()
    assert manifest is not None and manifest.schema_version == Manifest.SCHEMA_VERSION and len(manifest.jobs) == 3
    assert {str(j.status) for j in manifest.jobs} == {"budget_exhausted", "failed", "skipped"}
    # version 2: the original's flat resolved_* names, filled from the version-1 `resolved` block;
    # version 4: the embedded specification, its trainer kwargs from what the job resolved
    raw = json.loads((v1_run / "meta" / "manifest.json").read_text())["jobs"]
    for entry, job in zip(raw, manifest.jobs, strict=True):
        assert job.resolved.trainer_kwargs == entry["resolved"]["trainer_kwargs"] == job.spec.trainer_kwargs
        assert job.resolved.optimizer == entry["resolved"]["optimizer"] and job.spec.mode == "stub"
    for reader in (run.read_summary, run.read_env, run.read_git, run.read_files_index):
        record = reader()
        assert record is not None and record.schema_version == type(record).SCHEMA_VERSION
    assert run.read_snapshot()["run_id"] == "v1-fixture"  # type: ignore[index]
    assert [type(e).__name__ for e in run.events()] == ["RunStarted", "JobSubmitted", "JobEnded", "JobSubmitted",
                                                         "JobEnded", "RunFinished"]
    results = run.read_results()
    assert sorted(str(r.status) for r in results.values()) == ["budget_exhausted", "failed", "skipped"]
    assert all(r.schema_version == JobResult.SCHEMA_VERSION and r.non_finite == [] and r.sandbox == "" and not r.best_state_failed
               for r in results.values())
    ok = next(job_id for job_id, r in results.items() if r.status == "budget_exhausted")
    job = run.job(ok)
    assert job.read_meta().attempt == 1  # type: ignore[union-attr]
    assert job.read_meta().spec.sandbox == "strong" and run.read_env().sandbox is None  # type: ignore[union-attr]
    meta = job.read_meta()  # version 3: status unknown, resolved_* from the specification
    assert meta is not None and meta.status is None and meta.record()["raw_params"] == meta.spec.params
    assert meta.resolved.trainer_kwargs == meta.spec.trainer_kwargs and meta.resolved.optimizer == meta.spec.optimizer_name
    assert job.read_attempts().schema_version == 3  # type: ignore[union-attr]
    assert job.read_heartbeat() is not None and len(job.read_curve()) == 2
    best = job.read_state("best")
    assert best is not None and best.score == results[ok].score_best
    assert [line.kind for line in job.read_state_history()] == ["initial", "step", "final"]
    events = list(job.events())
    assert sum(isinstance(e, LLMCall) for e in events) == results[ok].llm_calls
    assert isinstance(events[-1], JobFinished) and events[-1].status == "budget_exhausted"
    assert isinstance(list(run.events())[-1], RunFinished)


def test_readers_of_every_layer_load_a_version_1_run(v1_run: Path) -> None:
    pytest.importorskip("pandas")
    from trace_bench.analysis import load_runs
    from trace_bench.trackers.source import iter_jobs
    from trace_bench.ui.discovery import job_entries, run_info

    runs = load_runs(v1_run)
    assert len(runs.jobs) == 3 and runs.jobs["scored"].sum() == 1 and len(runs.curves) == 2
    assert len(runs.llm_calls) == int(runs.jobs["llm_calls"].sum())
    info = run_info(v1_run)
    assert info.state == "finished" and info.total_jobs == 3 and info.problem is None
    assert {e["status"] for e in job_entries(v1_run)} == {"budget_exhausted", "failed", "skipped"}
    assert sorted(str(j.results.status) for j in iter_jobs(v1_run)) == ["budget_exhausted", "failed", "skipped"]


def test_a_version_1_result_with_nan_is_upgraded_to_null_and_flagged(tmp_path: Path) -> None:
    job = RunStore.create(tmp_path, "r").job("j")
    job.root.mkdir(parents=True)
    data = json.loads((next(V1_RUN.glob("jobs/*/results.json"))).read_text())
    text = json.dumps({**data, "score_final": float("nan"), "score_best": float("inf")})
    assert "NaN" in text  # what version 1 wrote: Python's json allowed it
    job.results_path.write_text(text, encoding="utf-8")
    record = job.read_result()
    assert record is not None and record.schema_version == JobResult.SCHEMA_VERSION
    assert record.score_final is None and record.score_best is None
    assert record.non_finite == ["score_best", "score_final"]


def test_a_file_from_a_newer_trace_bench_is_refused_with_a_message(v1_run: Path) -> None:
    run = RunStore(v1_run)
    job = run.job(run.job_ids()[0])
    data = json.loads(job.results_path.read_text())
    job.results_path.write_text(json.dumps({**data, "schema_version": JobResult.SCHEMA_VERSION + 1}))
    newer, current = JobResult.SCHEMA_VERSION + 1, JobResult.SCHEMA_VERSION
    with pytest.raises(NewerSchemaError, match=rf"results\.json: schema_version {newer} is newer than this "
                                               rf"trace-bench reads \(JobResult version {current}\); upgrade trace-bench"):
        job.read_result()
    job.results_path.write_text(json.dumps({**data, "seed": "seven"}))
    with pytest.raises(StoreError, match=r"results\.json: not a valid JobResult \(spec\.seed: "):
        job.read_result()


def test_unknown_fields_of_a_newer_writer_survive_a_round_trip(tmp_path: Path) -> None:
    job = RunStore.create(tmp_path, "r").job("j")
    record = record_of("j", future_field="OPRO")
    job.write_result(record)
    again = job.read_result()
    assert again is not None and again.model_extra == {"future_field": "OPRO"}


def test_committed_json_schemas_match_the_models(tmp_path: Path) -> None:
    from trace_bench.store import schema_export

    assert schema_export.stale_schemas() == [], "regenerate: python -m trace_bench.store.schema_export"
    (tmp_path / "job_result.schema.json").write_text("{}")
    stale = schema_export.stale_schemas(tmp_path)
    assert "job_result" in stale and "manifest" in stale
    assert schema_export.main(["--check", "--out", str(tmp_path)]) == 1
    schema = json.loads((REPO / "docs" / "schemas" / "job_result.schema.json").read_text())
    assert schema["properties"]["schema_version"]["const"] == JobResult.SCHEMA_VERSION
    assert "non_finite" in schema["properties"] and "status" in schema["required"]


def test_a_version_6_record_of_a_resumed_job_reads_with_its_carried_spend(tmp_path: Path) -> None:
    """Version 6 counted a resumed job's last attempt only; its ``budget_spent`` held the whole."""
    job = RunStore.create(tmp_path, "r").job("j")
    job.root.mkdir(parents=True)
    data = record_of("j", llm_calls=2, total_tokens=300, cost_usd=0.25, attempt=2,
                     budget_spent={"llm_calls": 6, "tokens": 1000, "usd": 1.0, "wall_s": 3.0}).record()
    for name in ("carried_llm_calls", "carried_tokens", "carried_cost_usd"):
        data.pop(name)
    job.results_path.write_text(json.dumps({**data, "schema_version": 6}), encoding="utf-8")
    record = job.read_result()
    assert record is not None and record.schema_version == JobResult.SCHEMA_VERSION
    assert (record.llm_calls, record.total_tokens, record.cost_usd) == (6, 1000, 1.0)
    assert (record.carried_llm_calls, record.carried_tokens, record.carried_cost_usd) == (4, 700, 0.75)
    once = {**data, "attempt": 1, "schema_version": 6}  # a job that ran once carries nothing
    job.results_path.write_text(json.dumps(once), encoding="utf-8")
    record = job.read_result()
    assert record is not None and (record.llm_calls, record.carried_llm_calls) == (2, None)

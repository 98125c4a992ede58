"""results.csv's columns come from the job record: a field added to ``JobResult`` is a column, typed by
its annotation, written by the tables and read back typed, with no second edit; the job's
specification is one frozen model that the manifest entry, job_meta.json and the record embed."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from pydantic import Field, ValidationError

from tests.records import record_of, spec_of
from trace_bench.store.columns import RESULT_COLUMNS, result_columns
from trace_bench.store.models import CSV_COLUMNS, JobMeta, JobResult, Manifest, ManifestJob, Resolution
from trace_bench.store.models.job import record_columns
from trace_bench.store.run_store import RunStore


class _WithNewField(JobResult):
    """What a teammate's change looks like: one field, nothing else."""

    score_holdout: float | None = Field(default=None, description="a new score")
    notes: list[str] = Field(default_factory=list, json_schema_extra={"column": False})


def test_a_new_field_is_a_typed_column_after_ours() -> None:
    assert record_columns(_WithNewField) == (*CSV_COLUMNS, "score_holdout")
    column = result_columns(_WithNewField)[-1]
    assert (column.name, column.kind) == ("score_holdout", "float")


def test_columns_are_typed_by_the_record_annotations() -> None:
    kinds = {c.name: c.kind for c in RESULT_COLUMNS}
    assert [c.name for c in RESULT_COLUMNS] == list(CSV_COLUMNS)
    assert (kinds["seed"], kinds["score_best"], kinds["tokens_estimated"], kinds["params"]) == ("int", "float", "bool",
                                                                                               "json")
    assert kinds["started_at"] == "timestamp" and kinds["task"] == kinds["optimizer"] == "str"
    assert {"traceback", "usage_by_role", "spec", "resolved"}.isdisjoint(kinds)


def test_rows_written_are_read_back_typed(tmp_path: Path) -> None:
    run = RunStore.create(tmp_path, "r")
    tables = run.tables({"run_id": "r"})
    tables.add(record_of("a", score_best=0.5, tokens_estimated=True, params={"k": 1}, seed=7,
                         score_dict_best={"score": 0.5, "loss": 0.25}))
    tables.add(record_of("b", status="failed", error="boom"))
    tables.write()
    with open(run.results_csv_path, encoding="utf-8") as handle:
        head = next(csv.reader(handle))
    assert head[:len(CSV_COLUMNS)] == list(CSV_COLUMNS) and head[len(CSV_COLUMNS)] == "obj_loss"
    table = run.read_result_rows()
    assert table is not None
    names = [c.name for c in table[0]]
    rows = {row[names.index("job_id")]: dict(zip(names, row, strict=True)) for row in table[1]}
    assert rows["a"]["seed"] == 7 and rows["a"]["score_best"] == 0.5 and rows["a"]["tokens_estimated"] is True
    assert rows["a"]["params"] == {"k": 1} and rows["a"]["obj_loss"] == 0.25 and rows["a"]["optimizer"] == "OptoPrime"
    assert rows["b"]["score_best"] is None and rows["b"]["error"] == "boom" and rows["b"]["task_id"] == "s:t"


def test_the_specification_is_frozen_and_embedded_not_copied() -> None:
    spec = spec_of("j", trainer_kwargs={"num_steps": 2}, optimizer="OPRO")
    with pytest.raises(ValidationError):
        spec.task = "other:task"  # type: ignore[misc]
    resolution = Resolution.planned(spec)
    meta = JobMeta(run_id="r", spec=spec, resolved=resolution)
    entry = ManifestJob(spec=spec, resolved=resolution)
    record = JobResult(run_id="r", spec=spec, status="ok", resolved=resolution)
    assert meta.spec is spec and entry.spec is spec and record.spec is spec
    # each file keeps its layout, and reads back the same specification
    assert JobMeta.load(meta.record()).spec == ManifestJob.model_validate(entry.model_dump(mode="json")).spec \
        == JobResult.load(record.record()).spec == spec
    assert meta.record()["task"] == entry.model_dump(mode="json")["task"] == record.record()["task"] == "s:t"
    assert record.record()["optimizer"] == "OPRO" and record.record()["resolved_trainer_kwargs"] == {"num_steps": 2}
    manifest = Manifest(run_id="r", config_hash="h", mode="stub", jobs=[entry])
    assert Manifest.load(manifest.record()).jobs[0].spec == spec

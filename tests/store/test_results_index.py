"""The results index (one line per finished job) answers a resume without opening two files per
job, and never outranks the per-job files: a torn, missing or stale index falls back to them."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from tests.conftest import only_run_dir, run_cli
from trace_bench.config.loader import load_config
from trace_bench.matrix.expand import expand_matrix
from trace_bench.registry.tasks import TaskCatalog
from trace_bench.runner.plan import plan_jobs
from trace_bench.store.job_store import JobStore
from trace_bench.store.results_index import LazyResult
from trace_bench.store.run_store import RunStore

CONFIG = "mode: stub\nseeds: [1, 2, 3]\ntasks: [internal:numeric_param]\ntrainers: [NoOpTrainer]\n"
TABLES = ("results.csv", "leaderboard.csv")


@pytest.fixture(scope="module")
def _original(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("index")
    (root / "c.yaml").write_text(CONFIG)
    proc = run_cli("run", "--config", str(root / "c.yaml"), "--runs-dir", str(root / "runs"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    return only_run_dir(root / "runs")


@pytest.fixture()
def finished(_original: Path, tmp_path: Path) -> tuple[Path, Path]:
    """(config, a finished run of it) that the test may damage: a copy of one run made per module."""
    config = tmp_path / "c.yaml"
    config.write_text(CONFIG)
    run = tmp_path / "runs" / _original.name
    shutil.copytree(_original, run, symlinks=True)
    return config, run


def _resume(run: Path) -> None:
    proc = run_cli("run", "--resume", str(run), "--quiet")
    assert proc.returncode == 0, proc.stderr


def _tables(run: Path) -> dict[str, str]:
    return {name: (run / name).read_text() for name in TABLES}


def test_one_line_per_finished_job(finished: tuple[Path, Path]) -> None:
    _, run = finished
    lines = [json.loads(line) for line in (run / "results_index.jsonl").read_text().splitlines()]
    jobs = sorted(p.name for p in (run / "jobs").iterdir())
    assert sorted(line["job_id"] for line in lines) == jobs
    for line in lines:
        on_disk = json.loads((run / "jobs" / line["job_id"] / "results.json").read_text())
        assert line["record"] == on_disk


def test_a_resume_plans_from_the_index_without_reading_job_records(finished: tuple[Path, Path],
                                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    config, run = finished
    specs = expand_matrix(load_config(str(config)), TaskCatalog.create(None))

    def refuse(self: JobStore) -> None:
        raise AssertionError(f"read {self.results_path}")

    monkeypatch.setattr(JobStore, "read_result", refuse)
    monkeypatch.setattr(JobStore, "read_meta", refuse)
    plan = plan_jobs(specs, RunStore(run), "auto")
    assert plan.index_complete and not any(item.run for item in plan.jobs)
    assert {item.previous.job_id for item in plan.jobs if item.previous} == {s.job_id for s in specs}


def test_a_record_kept_from_the_index_has_the_status_of_its_file(finished: tuple[Path, Path]) -> None:
    """A resumed run's outcome mixes records parsed from results.json and records kept as the
    index's text: both carry a ``Status`` (``.successful``), not a bare string."""
    config, run = finished
    plan = plan_jobs(expand_matrix(load_config(str(config)), TaskCatalog.create(None)), RunStore(run), "auto")
    kept = [item.previous for item in plan.jobs if isinstance(item.previous, LazyResult)]
    assert len(kept) == 3
    for record in kept:
        assert record.status is record.load().status
        assert record.status.successful


def test_a_resume_of_a_finished_run_leaves_its_tables_as_they_were(finished: tuple[Path, Path]) -> None:
    _, run = finished
    before = _tables(run)
    _resume(run)
    assert _tables(run) == before


@pytest.mark.parametrize("damage", ["torn last line", "torn at a nested brace", "missing", "garbage"])
def test_a_damaged_index_is_repaired_from_the_job_files(finished: tuple[Path, Path], damage: str) -> None:
    _, run = finished
    index = run / "results_index.jsonl"
    before, lines = _tables(run), index.read_text().splitlines(keepends=True)
    if damage == "torn last line":
        index.write_text("".join(lines[:-1]) + lines[-1][: len(lines[-1]) // 2])
    elif damage == "torn at a nested brace":  # looks whole at a glance: ends in "}}" and a newline
        record_at = lines[-1].index('"record": ')
        cut = lines[-1].index("}", record_at) + 1  # a nested mapping's end, well before the record's
        assert cut < len(lines[-1]) - 3
        index.write_text("".join(lines[:-1]) + lines[-1][:cut] + "}\n")
    elif damage == "missing":
        index.unlink()
    else:
        index.write_text("not json\n" * 3)
    _resume(run)
    assert _tables(run) == before
    repaired = [json.loads(line) for line in index.read_text().splitlines()]
    assert sorted(line["job_id"] for line in repaired) == sorted(p.name for p in (run / "jobs").iterdir())


def test_a_record_edited_after_the_index_wins(finished: tuple[Path, Path]) -> None:
    """results.json is the source of truth: an edit (newer mtime) is read, not the indexed copy."""
    _, run = finished
    job = next((run / "jobs").iterdir())
    path = job / "results.json"
    record = json.loads(path.read_text())
    record["score_best"] = 123.0
    path.write_text(json.dumps(record))
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000))
    _resume(run)
    rows = (run / "results.csv").read_text().splitlines()
    assert any(job.name in row and ",123.0," in row for row in rows)
    indexed = {json.loads(line)["job_id"]: json.loads(line) for line in (run / "results_index.jsonl").open()}
    assert indexed[job.name]["record"]["score_best"] == 123.0, "the index is rewritten from the files"


def test_the_files_index_is_the_same_whether_built_whole_or_incrementally(finished: tuple[Path, Path]) -> None:
    _, run = finished
    store = RunStore(run)
    incremental = json.loads(store.files_index_path.read_text())["files"]
    store.files_index_path.unlink()
    store.write_files_index()
    whole = json.loads(store.files_index_path.read_text())["files"]
    assert [f for f in incremental if f["path"] != "meta/files_index.json"] == \
        [f for f in whole if f["path"] != "meta/files_index.json"]
    job = next((run / "jobs").iterdir())
    (job / "extra.txt").write_text("12345")
    store.write_files_index()
    assert {"path": f"jobs/{job.name}/extra.txt", "bytes": 5} in json.loads(store.files_index_path.read_text())["files"]


def test_the_manifest_is_json_with_one_entry_per_line(finished: tuple[Path, Path]) -> None:
    _, run = finished
    store = RunStore(run)
    text = store.manifest_path.read_text()
    data = json.loads(text)
    lines = text.splitlines()
    assert len(lines) == len(data["jobs"]) + 2 and all(line.startswith('{"job_id": ') for line in lines[1:-1])
    manifest = store.read_manifest()
    assert manifest is not None and [j.job_id for j in manifest.jobs] == [j["job_id"] for j in data["jobs"]]
    head = store.read_manifest_head()
    assert head is not None and head.jobs == [] and head.config_hash == data["config_hash"]
    assert store.read_manifest_listing() == (head, [j["job_id"] for j in data["jobs"]])


def test_the_manifest_is_rewritten_only_when_an_entry_would_change(finished: tuple[Path, Path]) -> None:
    _, run = finished
    manifest = run / "meta" / "manifest.json"
    _resume(run)  # ok -> reused: the entries change
    first = manifest.read_text()
    assert {job["status"] for job in json.loads(first)["jobs"]} == {"reused"}
    _resume(run)
    assert manifest.read_text() == first, "nothing changed: same file, same generated_at"
    job = next((run / "jobs").iterdir())
    (job / "results.json").unlink()  # the job runs again: its entry changes
    _resume(run)
    entries = {j["job_id"]: j["status"] for j in json.loads(manifest.read_text())["jobs"]}
    assert entries[job.name] == "ok" and manifest.read_text() != first

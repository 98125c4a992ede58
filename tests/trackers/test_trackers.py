"""Trackers export a real stub run: MLflow (local file store), TensorBoard event files and W&B's
offline files (read back with W&B's own record format)."""

from __future__ import annotations

import csv
import json
import struct
from pathlib import Path
from typing import Any

import pytest

from tests.conftest import REPO, only_run_dir, run_cli
from trace_bench.config.models import RunConfig
from trace_bench.trackers import active_trackers, export_run


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    runs = tmp_path_factory.mktemp("tracked") / "runs"
    run_cli("run", "--config", str(REPO / "configs" / "m1_matrix_smoke.yaml"), "--runs-dir", str(runs), "--quiet",
            check=True)
    return only_run_dir(runs)


def _scalars(logdir: Path) -> dict[str, list[tuple[int, float]]]:
    """Scalars of every event file in ``logdir`` (TFRecord framing: length, crc, payload, crc)."""
    from tensorboardX.proto.event_pb2 import Event

    out: dict[str, list[tuple[int, float]]] = {}
    for path in logdir.glob("events.out.tfevents.*"):
        data = path.read_bytes()
        offset = 0
        while offset + 12 <= len(data):
            (length,) = struct.unpack("<Q", data[offset:offset + 8])
            payload = data[offset + 12:offset + 12 + length]
            offset += 12 + length + 4
            event = Event.FromString(payload)
            for value in event.summary.value:
                out.setdefault(value.tag, []).append((event.step, value.simple_value))
    return out


def test_active_trackers_follow_config_and_mlflow_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("MLFLOW_TRACKING_URI", raising=False)
    assert active_trackers([]) == []
    assert active_trackers(["tensorboard"]) == ["tensorboard"]
    assert active_trackers(["wandb", "tensorboard"]) == ["tensorboard", "wandb"]
    assert RunConfig.model_validate({"tasks": ["internal:numeric_param"], "trainers": ["NoOpTrainer"],
                                     "trackers": ["wandb"]}).trackers == ["wandb"]
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "file:///nowhere")
    assert active_trackers(["tensorboard"]) == ["mlflow", "tensorboard"]


def test_tensorboard_event_files_hold_the_curve(run_dir: Path) -> None:
    export_run(run_dir, ["tensorboard"])
    job = next(j for j in (run_dir / "jobs").iterdir()
               if json.loads((j / "results.json").read_text())["trainer"] == "PrioritySearch")
    with open(job / "artifacts" / "curve.csv", encoding="utf-8") as handle:
        curve_rows = list(csv.DictReader(handle))
    scalars = _scalars(job / "tb")
    assert len(scalars["curve/best_score"]) == len(curve_rows)
    assert [step for step, _ in scalars["curve/best_score"]] == [int(r["step"]) for r in curve_rows]
    assert scalars["curve/best_score"][-1][1] == pytest.approx(float(curve_rows[-1]["best_score"]))
    assert "best_score_by/llm_calls" in scalars and "final/score_best" in scalars
    export_run(run_dir, ["tensorboard"])  # re-export replaces, never appends
    assert len(_scalars(job / "tb")["curve/best_score"]) == len(curve_rows)


def test_mlflow_parent_nested_runs_and_step_metrics(run_dir: Path, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from mlflow.tracking import MlflowClient

    uri = f"file://{tmp_path / 'mlruns'}"
    monkeypatch.setenv("MLFLOW_TRACKING_URI", uri)
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")  # MLflow 3 keeps the file store behind this switch
    export_run(run_dir, active_trackers([]))
    export_run(run_dir, ["mlflow"])  # idempotent: no duplicate parent or job runs
    client = MlflowClient(tracking_uri=uri)
    experiment = client.get_experiment_by_name("trace-bench")
    runs = client.search_runs([experiment.experiment_id])
    parents = [r for r in runs if r.data.tags.get("trace_bench.kind") == "run"]
    jobs = [r for r in runs if r.data.tags.get("trace_bench.kind") == "job"]
    assert len(parents) == 1 and len(jobs) == 4
    parent = parents[0]
    assert parent.data.tags["trace_bench.run_id"] == run_dir.name
    assert parent.data.params["mode"] == "stub" and parent.data.metrics["jobs_total"] == 4
    assert all(j.data.tags["mlflow.parentRunId"] == parent.info.run_id for j in jobs)
    search = next(j for j in jobs if j.data.params["trainer"] == "PrioritySearch"
                  and j.data.params["task"] == "internal:numeric_param")
    history = client.get_metric_history(search.info.run_id, "best_score")
    curve = (run_dir / "jobs" / search.data.tags["trace_bench.job_id"] / "artifacts" / "curve.csv")
    assert sorted(m.step for m in history) == [int(r.split(",")[0]) for r in curve.read_text().splitlines()[1:]]
    for name in ("score", "llm_calls", "tokens", "usd", "final_score_best"):
        assert client.get_metric_history(search.info.run_id, name), name
    artifacts = {a.path for a in client.list_artifacts(search.info.run_id)}
    assert {"artifacts", "results.json"} <= artifacts
    assert "results.csv" in {a.path for a in client.list_artifacts(parent.info.run_id)}


def test_tracker_errors_become_warnings_not_failures(run_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MLFLOW_TRACKING_URI", "unknown-scheme://nowhere")
    export_run(run_dir, ["mlflow"])  # must not raise
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    warning = [e for e in events if e["type"] == "tracker_warning"][-1]
    assert warning["tracker"] == "mlflow" and warning["error"]


def test_run_exports_to_the_trackers_it_names(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``trackers:`` in the config (and ``MLFLOW_TRACKING_URI``) export the run when it ends."""
    from mlflow.tracking import MlflowClient

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")

    config = tmp_path / "c.yaml"
    config.write_text("tasks: [internal:numeric_param]\ntrainers: [NoOpTrainer]\nseeds: [1]\n"
                      "trackers: [tensorboard]\n")
    uri = f"file://{tmp_path / 'mlruns'}"
    run_cli("run", "--config", str(config), "--runs-dir", str(tmp_path / "runs"), "--quiet", check=True,
            env={"MLFLOW_TRACKING_URI": uri, "MLFLOW_ALLOW_FILE_STORE": "true"})
    run = only_run_dir(tmp_path / "runs")
    job = next((run / "jobs").iterdir())
    assert _scalars(job / "tb")["curve/best_score"]
    experiment = MlflowClient(tracking_uri=uri).get_experiment_by_name("trace-bench")
    runs = MlflowClient(tracking_uri=uri).search_runs([experiment.experiment_id])
    assert {r.data.tags.get("trace_bench.run_id") for r in runs} >= {run.name}
    assert "files_index.json" in {p.name for p in (run / "meta").iterdir()}


def _wandb_records(path: Path) -> list[Any]:
    """The records of an offline W&B run's ``run-<id>.wandb`` file: a 7-byte header, then LevelDB-log
    blocks of 32 KiB whose chunks (crc, length, type) hold serialized ``Record`` protobufs."""
    from wandb.proto import wandb_internal_pb2

    data = path.read_bytes()
    assert data[:4] == b":W&B"
    records, position, pending = [], 7, b""
    while position + 7 <= len(data):
        left = 32768 - position % 32768
        if left < 7:  # a block's tail too short for a chunk header is padding
            position += left
            continue
        _, length, kind = struct.unpack("<IHB", data[position:position + 7])
        chunk = data[position + 7:position + 7 + length]
        position += 7 + length
        pending = chunk if kind in (1, 2) else pending + chunk
        if kind in (1, 4):  # a whole record, or the last chunk of one
            record = wandb_internal_pb2.Record()  # type: ignore[attr-defined]  # generated, no stubs
            record.ParseFromString(pending)
            records.append(record)
    return records


def _items(items: Any) -> dict[str, Any]:
    """A record's items (``key``, or ``nested_key`` joined with ``/``) with their JSON values."""
    return {item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in items}


def _wandb_run(run_dir: Path) -> dict[str, Any]:
    """What an offline W&B run wrote: its run record, history rows, summary and logged tables."""
    out: dict[str, Any] = {"history": [], "summary": {}, "tables": {}}
    for record in _wandb_records(next(run_dir.glob("run-*.wandb"))):
        kind = record.WhichOneof("record_type")
        if kind == "run":
            out["run"] = record.run
            out["config"] = _items(record.run.config.update)
        elif kind == "history":
            out["history"].append({k: v for k, v in _items(record.history.item).items() if not k.startswith("_")})
        elif kind == "summary":
            out["summary"].update(_items(record.summary.update))
    for table in run_dir.glob("files/media/table/*.table.json"):
        out["tables"][table.name.split("_")[0]] = json.loads(table.read_text(encoding="utf-8"))
    return out


def test_wandb_offline_one_run_per_job_with_curve_summary_and_transcript(run_dir: Path, tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    import wandb

    monkeypatch.setenv("WANDB_MODE", "offline")
    monkeypatch.setenv("WANDB_DIR", str(tmp_path))
    monkeypatch.setenv("WANDB_PROJECT", "tb-test")
    warnings_before = (run_dir / "events.jsonl").read_text().count("tracker_warning")
    try:
        export_run(run_dir, ["wandb"])
    finally:
        wandb.teardown()
    assert (run_dir / "events.jsonl").read_text().count("tracker_warning") == warnings_before
    runs = [_wandb_run(path) for path in sorted((tmp_path / "wandb").glob("offline-run-*"))]
    assert {r["run"].run_group for r in runs} == {run_dir.name} and {r["run"].project for r in runs} == {"tb-test"}
    jobs = [r for r in runs if r["run"].job_type == "job"]
    (whole,) = [r for r in runs if r["run"].job_type == "run"]
    assert len(jobs) == 4 and whole["summary"]["jobs_total"] == 4.0 and len(whole["tables"]["leaderboard"]["data"]) == 4
    search = next(r for r in jobs if r["config"]["trainer"] == "PrioritySearch"
                  and r["config"]["task"] == "internal:numeric_param")
    job_id = search["run"].run_id.split("-")[3]
    job = run_dir / "jobs" / job_id
    with open(job / "artifacts" / "curve.csv", encoding="utf-8") as handle:
        curve = list(csv.DictReader(handle))
    assert [row["best_score"] for row in search["history"] if "best_score" in row] == \
        pytest.approx([float(row["best_score"]) for row in curve])
    assert [row["step"] for row in search["history"] if "step" in row] == [int(row["step"]) for row in curve]
    results = json.loads((job / "results.json").read_text())
    assert search["summary"]["score_best"] == pytest.approx(results["score_best"])
    assert list(search["run"].tags) == ["ok", "stub"] and search["run"].run_id.endswith(f"{job_id}-1")
    calls = (job / "artifacts" / "transcript.jsonl").read_text().splitlines()
    table = search["tables"]["transcript"]
    assert len(table["data"]) == len(calls) > 0 and table["columns"][:3] == ["call", "step", "role"]
    assert table["data"][0][2] == "optimizer" and '"suggestion"' in table["data"][0][7]

"""Trackers export a real stub run: MLflow (local file store) and TensorBoard event files."""

from __future__ import annotations

import csv
import json
import struct
from pathlib import Path

import pytest

from tests.conftest import REPO, only_run_dir, run_cli
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

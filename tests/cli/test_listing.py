"""list-tasks / list-trainers output formats, filters and errors."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.conftest import USER_TASKS, run_cli


def test_list_trainers_tsv_lists_only_real_trainers() -> None:
    proc = run_cli("list-trainers", check=True)
    rows = [line.split("\t") for line in proc.stdout.strip().splitlines()]
    ids = {row[0] for row in rows}
    assert {"PrioritySearch", "NoOpTrainer"} <= ids
    assert all(row[1] == "available" for row in rows)
    assert not ids & {"SearchTemplate", "Trainer", "TrainerParams", "Minibatch_base"}


def test_list_trainers_json_and_table() -> None:
    rows = json.loads(run_cli("list-trainers", "--all", "--format", "json", check=True).stdout)
    assert all({"trainer_id", "status", "source", "reason"} <= set(row) for row in rows)
    assert all(row["source"] in {"built-in", "external", "plugin", "opto"} for row in rows)
    table = run_cli("list-trainers", "--format", "table", check=True).stdout
    assert table.splitlines()[0].split()[:2] == ["TRAINER_ID", "STATUS"]


def test_list_tasks_default_and_bench_filter() -> None:
    rows = [line.split("\t") for line in run_cli("list-tasks", check=True).stdout.strip().splitlines()]
    ids = [row[0] for row in rows]
    assert "internal:numeric_param" in ids and "trace_examples:greeting_stub" in ids
    assert all(row[1] == "available" for row in rows), "without --all only tasks that can run here"
    every = [line.split("\t") for line in run_cli("list-tasks", "--all", check=True).stdout.strip().splitlines()]
    assert {row[0] for row in every} >= set(ids) and "terminal_bench:regex-log" in {row[0] for row in every}
    assert all(len(row) == 3 for row in every if row[1] == "unavailable"), "unavailable rows carry a reason"
    only_internal = run_cli("list-tasks", "--bench", "internal", check=True).stdout.split()
    assert only_internal and all(t.startswith("internal:") for t in only_internal[::2])


def test_unknown_bench_is_a_user_error() -> None:
    proc = run_cli("list-tasks", "--bench", "internl")
    assert proc.returncode == 2
    assert "unknown bench 'internl'" in proc.stderr and "did you mean 'internal'?" in proc.stderr


def test_missing_root_is_a_clear_error(tmp_path: Path) -> None:
    proc = run_cli("list-tasks", "--root", str(tmp_path / "missing"))
    assert proc.returncode == 2
    assert "does not exist" in proc.stderr and "Traceback" not in proc.stderr


def test_root_lists_user_modules_first() -> None:
    proc = run_cli("list-tasks", "--root", str(USER_TASKS), check=True)
    first = proc.stdout.splitlines()[0].split("\t")[0]
    assert first.startswith("llm4ad:")
    assert "llm4ad:shared_state" in proc.stdout


def test_version_and_help() -> None:
    assert run_cli("--version", check=True).stdout.startswith("trace-bench ")
    help_text = run_cli("--help", check=True).stdout
    for command in ("list-tasks", "list-trainers", "validate", "run", "ui", "report", "compare", "fake-llm"):
        assert command in help_text
    run_help = run_cli("run", "--help", check=True).stdout
    for flag in ("--runs-dir", "--max-workers", "--force", "--resume", "--job-timeout", "--logger", "--root"):
        assert flag in run_help


def test_no_command_is_usage_error() -> None:
    assert run_cli().returncode == 2


def test_every_command_turns_telemetry_and_price_map_downloads_off(monkeypatch: pytest.MonkeyPatch,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """The driver (UI, Ray, trackers) must not phone home or fetch LiteLLM's price map offline,
    unless the user chose otherwise."""
    from trace_bench.cli.main import main

    monkeypatch.delenv("LITELLM_LOCAL_MODEL_COST_MAP", raising=False)
    monkeypatch.delenv("GRADIO_ANALYTICS_ENABLED", raising=False)
    monkeypatch.setenv("RAY_USAGE_STATS_ENABLED", "1")  # the user's own choice wins
    assert main(["list-trainers"]) == 0
    assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert os.environ["GRADIO_ANALYTICS_ENABLED"] == "False"
    assert os.environ["RAY_USAGE_STATS_ENABLED"] == "1"

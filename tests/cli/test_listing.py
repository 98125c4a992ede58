"""list-tasks / list-trainers output formats, filters and errors."""

from __future__ import annotations

import json
import os
import subprocess
import sys
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
    for command in ("list-tasks", "list-trainers", "validate", "run", "ui", "report", "compare", "table", "fake-llm"):
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


def test_static_trainer_table_says_what_the_classes_say() -> None:
    """list-trainers reads a static table; resolution imports the classes: they must agree."""
    from trace_bench.registry.trainer_catalog import BUILTIN_TRAINERS, list_trainer_rows
    from trace_bench.registry.trainers import _load, list_trainers

    for meta in BUILTIN_TRAINERS:
        cls = _load(meta.target)
        assert (cls.id, cls.description, cls.source, tuple(cls.requires), cls.extra, cls.probe) == (
            meta.id, meta.description, meta.source, meta.requires, meta.extra, meta.probe), meta.id
    static = [(r.id, r.source, r.reason, r.description) for r in list_trainer_rows(include_unavailable=True)]
    loaded = [(i.id, i.source, i.reason, i.cls.description) for i in list_trainers(include_unavailable=True)]
    assert static == loaded


def test_list_trainers_imports_no_trainer_module() -> None:
    """Listing imports no trainer module (only a trainer's stdlib-only availability probe)."""
    code = ("import sys\n"
            "from trace_bench.cli.main import main\n"
            "assert main(['list-trainers', '--all', '--format', 'json']) == 0\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('pydantic', 'opto', 'litellm', 'dspy')\n"
            "               or m.startswith('trace_bench.trainers.') and m.count('.') > 2\n"
            "               and not m.endswith('_probe'))\n"  # availability probes: standard library only
            "print('HEAVY', heavy, file=sys.stderr)\n"
            "assert not heavy, heavy\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    rows = json.loads(proc.stdout)
    assert {"PrioritySearch", "StreamingPrioritySearch", "DSPyTrainer"} <= {row["trainer_id"] for row in rows}
    assert all(row["description"] for row in rows)


def test_plugin_trainers_are_listed_and_a_broken_one_is_unavailable(tmp_path: Path) -> None:
    (tmp_path / "my_trainer.py").write_text(
        "from trace_bench.trainers.base import Trainer\n\n"
        "class Mine(Trainer):\n"
        "    id = 'MyTrainer'\n"
        "    description = 'A plugin trainer.'\n\n"
        "    def train(self) -> None:\n"
        "        pass\n", encoding="utf-8")
    dist = tmp_path / "my_trainer-0.1.dist-info"
    dist.mkdir()
    (dist / "METADATA").write_text("Metadata-Version: 2.1\nName: my-trainer\nVersion: 0.1\n", encoding="utf-8")
    (dist / "entry_points.txt").write_text(
        "[trace_bench.trainers]\nMyTrainer = my_trainer:Mine\nBroken = no_such_module_here:Nope\n", encoding="utf-8")
    env = {"PYTHONPATH": str(tmp_path)}
    rows = json.loads(run_cli("list-trainers", "--all", "--format", "json", env=env, check=True).stdout)
    by_id = {row["trainer_id"]: row for row in rows}
    assert by_id["MyTrainer"]["source"] == "plugin" and by_id["MyTrainer"]["status"] == "available"
    assert by_id["MyTrainer"]["description"] == "A plugin trainer."
    assert by_id["Broken"]["status"] == "unavailable" and "import failed" in by_id["Broken"]["reason"]
    available = run_cli("list-trainers", env=env, check=True).stdout
    assert "MyTrainer" in available and "Broken" not in available


def test_list_trainers_all_says_what_each_trainer_is_and_which_tasks_it_fits(
        capsys: pytest.CaptureFixture[str]) -> None:
    """GEPA-Base (opto-based) and GEPATrainer (the gepa library) must be told apart, and each row
    names the parameter kinds it optimizes in list-tasks' words (continuous: a discovery problem's continuous form)."""
    from trace_bench.cli.main import main

    assert main(["list-trainers", "--all", "--format", "json"]) == 0
    rows = {row["trainer_id"]: row for row in json.loads(capsys.readouterr().out)}
    assert all(row["description"] and set(row["parameters"].split(",")) <= {"text", "code", "numeric", "continuous"}
               for row in rows.values())
    assert "Trace's optimizers" in rows["GEPA-Base"]["description"]
    assert "gepa library" in rows["GEPATrainer"]["description"] and "not GEPA-Base" in rows["GEPATrainer"]["description"]
    assert rows["DSPyTrainer"]["parameters"] == "text" and rows["SkyDiscover"]["parameters"] == "code"
    assert main(["list-trainers", "--all", "--format", "table"]) == 0
    header = capsys.readouterr().out.splitlines()[0].split()
    assert header[:5] == ["TRAINER_ID", "STATUS", "SOURCE", "PARAMETERS", "DESCRIPTION"]

"""Task folders as OpenEvolve, SkyDiscover and ShinkaEvolve ship them (tests/fixtures/peer_folders:
their shapes, our code) run unchanged: listed under a parent --root, validated with --strict and run
in stub mode, their initial score the one their own evaluator gives, two runs of one config alike,
and a recorded real-mode run over an LLM-calling evaluator replayed offline.

The runs are shared by the module's tests (one worker builds them once)."""

from __future__ import annotations

import csv
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.conftest import FIXTURES, run_cli

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the sandbox targets Linux")

ROOT = FIXTURES / "peer_folders"
PHASE_2 = {"config": "config_phase_2.yaml"}
TASKS: list[Any] = ["discovery:oe_minimize", {"id": "discovery:oe_packing", "eval_kwargs": PHASE_2},
                    "discovery:sd_points/11", "discovery:shinka_sine", "discovery:split_private", "discovery:sd_prompt"]
# the folders whose evaluation has randomness or a wall-clock metric: run twice
REPEATED: list[Any] = TASKS[:3]
TIMING_COLUMNS = ("run_id", "time_seconds", "started_at", "finished_at")


def _run(runs: Path, run_id: str, tasks: list[Any]) -> dict[str, dict[str, str]]:
    config = {"run_id": run_id, "mode": "stub", "runs_dir": str(runs), "seeds": [1], "max_workers": 2,
              "tasks": tasks, "trainers": [{"id": "PrioritySearch", "params_variants": [{"ps_steps": 1,
                                                                                          "ps_batches": 1}]}]}
    path = runs.parent / f"{run_id}.yaml"
    path.write_text(yaml.safe_dump(config), encoding="utf-8")
    proc = run_cli("run", "--config", str(path), "--root", str(ROOT), "--quiet")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    with open(runs / run_id / "results.csv", encoding="utf-8") as handle:
        return {row["task"]: row for row in csv.DictReader(handle)}


@pytest.fixture(scope="module")
def stub_runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    runs = tmp_path_factory.mktemp("peer_runs") / "runs"
    return _run(runs, "first", TASKS), _run(runs, "again", REPEATED)


def _result(row: dict[str, str], runs: Path | None = None) -> dict[str, Any]:
    return {k: v for k, v in row.items() if k not in TIMING_COLUMNS}


def test_every_layout_is_found_under_a_parent_root_and_a_folder_that_is_none_says_why() -> None:
    proc = run_cli("list-tasks", "--root", str(ROOT), "--all", "--bench", "discovery", "--format", "json")
    assert proc.returncode == 0, proc.stderr
    rows = {row["task_id"]: row for row in json.loads(proc.stdout)}
    for task in ("oe_minimize", "oe_packing", "sd_points/11", "shinka_sine", "oe_prompt", "sd_prompt", "split_private"):
        assert rows[f"discovery:{task}"]["status"] == "available", rows[f"discovery:{task}"]
    # SkyDiscover's containerized layout one level down, named by its path (heilbronn_convex/13)
    assert "SkyDiscover (containerized)" in rows["discovery:sd_points/11"]["description"]
    assert rows["discovery:oe_prompt"]["parameters"] == "text"  # a prompt folder evolves text
    # several configs and no config.yaml: the one read is named, and how to choose another
    assert "read config_phase_1.yaml" in rows["discovery:oe_packing"]["description"]
    generator = rows["discovery:sr_generator"]
    assert generator["status"] == "unavailable" and "not a task folder" in generator["reason"]
    assert "data_api.py" in generator["reason"] and "ShinkaEvolve" in generator["reason"]
    assert "discovery:sd_points" not in rows  # a directory of task folders is no task itself


def test_validate_strict_says_what_each_folder_runs_with_and_which_keys_do_not_apply(tmp_path: Path) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(yaml.safe_dump({"mode": "stub", "trainers": ["PrioritySearch"],
                                      "tasks": [*TASKS, "discovery:oe_prompt"]}), encoding="utf-8")
    proc = run_cli("validate", "--config", str(config), "--root", str(ROOT), "--strict", "--runs-dir",
                   str(tmp_path / "runs"))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    lines = proc.stdout.splitlines()

    def about(task: str, text: str) -> str:
        return next(line for line in lines if f"discovery:{task}:" in line and text in line)

    for task in ("oe_minimize", "oe_packing", "sd_points/11", "shinka_sine", "oe_prompt", "sd_prompt"):
        assert about(task, "the evaluator imports in the sandbox").startswith("[OK]")
    # the one-line 405-character system message is text, not a path; the containerized one is a file
    assert "system message inline (405 chars)" in about("oe_minimize", "layout")
    assert "system message task_prompt.md" in about("sd_points/11", "layout")
    assert "thresholds [1.3]" in about("oe_minimize", "layout")
    assert "config config_phase_2.yaml; timeout 45 s" in about("oe_packing", "layout")
    assert "system message run_evo.py" in about("shinka_sine", "layout")  # read, never run
    assert "timeout 40 s" in about("shinka_sine", "layout")  # its LocalJobConfig(time="00:00:40")
    assert "timeout 1800 s" in about("sd_prompt", "layout")  # config_adaevolve.yaml, the first config
    assert about("sd_prompt", "config_evox.yaml").startswith("[WARN]")
    keys = about("sd_points/11", "keys not used")
    assert "evaluator.cascade_thresholds (a containerized evaluator runs once per program" in keys
    assert "llm.models" in keys and "monitor.port" in keys and "evaluator.timeout" not in keys
    assert "evaluator.cascade" not in about("oe_minimize", "keys not used")  # its stages use them
    assert about("oe_prompt", "calls an LLM").startswith("[OK]")


def test_an_evaluator_dependency_that_is_missing_is_named_before_any_job(tmp_path: Path) -> None:
    # bm25s was missing from a prompt folder's machine: validate --strict said OK and every job failed
    # 10-20 s later; a module the evaluator imports now makes the task unavailable with the install
    # command, and a requirements.txt line this environment lacks is a FAIL of validate --strict.
    from trace_bench.registry.tasks import TaskCatalog

    root = tmp_path / "tasks"
    shutil.copytree(ROOT / "shinka_sine", root / "needs_module")
    source = root / "needs_module" / "evaluate.py"
    source.write_text("import bm25s_not_installed_here\n" + source.read_text(encoding="utf-8"), encoding="utf-8")
    shutil.copytree(ROOT / "shinka_sine", root / "needs_requirement")
    (root / "needs_requirement" / "requirements.txt").write_text("numpy\nsome-package-nobody-installed==1.0\n")
    catalog = TaskCatalog.create(root)
    reason = catalog.get("discovery:needs_module").unavailable_reason() or ""
    assert "bm25s_not_installed_here (pip install bm25s_not_installed_here)" in reason, reason
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [discovery:needs_module]\ntrainers: [PrioritySearch]\n", encoding="utf-8")
    refused = run_cli("validate", "--config", str(config), "--root", str(root))
    assert refused.returncode == 2 and "pip install bm25s_not_installed_here" in refused.stderr + refused.stdout
    checks = catalog.build("discovery:needs_requirement", {})["strict_checks"]()
    failed = [detail for verdict, detail in checks if verdict == "FAIL"]
    assert failed == [f"requirements.txt needs some-package-nobody-installed==1.0, which is not installed: pip install "
                      f"-r {root.resolve() / 'needs_requirement' / 'requirements.txt'}"], checks


def _python(*args: str, cwd: Path, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run([sys.executable, *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1", **(env or {})})
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def _seeding_site(directory: Path) -> dict[str, str]:
    """Child interpreters seeded as the docs say (random and numpy.random from 0), by a hook of the test's own."""
    directory.mkdir()
    (directory / "sitecustomize.py").write_text("import random\nrandom.seed(0)\n", encoding="utf-8")
    return {"PYTHONPATH": str(directory)}


def _own_scores(tmp_path: Path) -> dict[str, float]:
    """What each folder's evaluator says of its initial program when run as its library runs it."""
    seeded = "import random, sys, numpy; random.seed(0); numpy.random.seed(0); sys.path.insert(0, '.')\n"
    own = {}
    stage1 = seeded + "import evaluator; print(evaluator.evaluate_stage1('initial_program.py').metrics['combined_score'])"
    own["discovery:oe_minimize"] = float(_python("-c", stage1, cwd=ROOT / "oe_minimize"))  # below 1.3: stage 1 only
    cascade = seeded + ("import evaluator; first = evaluator.evaluate_stage1('initial_program.py')\n"
                        "assert first['combined_score'] >= 0.2\n"
                        "print(evaluator.evaluate_stage2('initial_program.py')['combined_score'])")
    own["discovery:oe_packing"] = float(_python("-c", cascade, cwd=ROOT / "oe_packing",
                                                env=_seeding_site(tmp_path / "site")))
    # the containerized evaluator reads /benchmark: a copy reads its own directory instead
    container = tmp_path / "container"
    shutil.copytree(ROOT / "sd_points" / "11", container)
    script = container / "evaluator" / "evaluator.py"
    script.write_text(script.read_text().replace("/benchmark", str(container / "evaluator")), encoding="utf-8")
    printed = _python(str(script), str(container / "initial_program.py"), "train", cwd=container / "evaluator")
    own["discovery:sd_points/11"] = json.loads(printed)["combined_score"]
    results = tmp_path / "shinka_results"
    _python("evaluate.py", "--program_path", "initial.py", "--results_dir", str(results), cwd=ROOT / "shinka_sine")
    own["discovery:shinka_sine"] = json.loads((results / "metrics.json").read_text())["combined_score"]
    answer = json.loads((ROOT / "split_private" / "private" / "answer.json").read_text())["answer"]
    own["discovery:split_private"] = -abs(3.0 - answer)  # its initial guess() is 3.0
    return own


def test_each_initial_score_is_what_the_folder_evaluator_itself_gives(stub_runs: Any, tmp_path: Path) -> None:
    first, _ = stub_runs
    for task, score in _own_scores(tmp_path).items():
        row = first[task]
        assert row["status"] == "ok", (task, row["error"])
        assert float(row["score_initial"]) == score, (task, row["score_initial"], score)  # to the last digit
    prompt = first["discovery:sd_prompt"]  # its evaluator's LLM calls went through the run's gateway
    assert prompt["status"] == "ok" and int(prompt["eval_llm_calls"]) > 0, prompt
    assert int(prompt["llm_calls"]) > int(prompt["eval_llm_calls"]) and int(prompt["eval_tokens"]) > 0
    assert first["discovery:oe_minimize"]["eval_llm_calls"] == ""  # an evaluator that calls none


def test_two_stub_runs_of_one_config_agree(stub_runs: Any) -> None:
    # The peers' evaluators report eval_time and draw unseeded random numbers, in process and in child
    # interpreters: three stub runs of one config gave 0.4045 / 0.3642 / 0.3642.
    first, again = stub_runs
    assert set(again) == {task if isinstance(task, str) else task["id"] for task in REPEATED}
    for task, row in again.items():
        assert _result(row) == _result(first[task]), task


def test_a_recorded_real_run_over_an_llm_calling_evaluator_replays_offline(tmp_path: Path) -> None:
    from trace_bench.llm.fake_server import FakeLLMServer

    key = "sk-peer-replay-" + "k" * 24
    runs = tmp_path / "runs"
    with FakeLLMServer(api_key=key, seed=3) as server:
        config = tmp_path / "real.yaml"
        config.write_text(yaml.safe_dump({
            "run_id": "recorded", "mode": "real", "seeds": [1], "tasks": ["discovery:oe_prompt"],
            "trainers": [{"id": "PrioritySearch", "params_variants": [{"ps_steps": 1, "ps_batches": 1}]}],
            "llm": {"base_url": server.url, "model": "fake-model", "api_key_env": "FAKE_LLM_KEY",
                    "cache": "read_write"}}), encoding="utf-8")
        recorded = run_cli("run", "--config", str(config), "--root", str(ROOT), "--runs-dir", str(runs), "--quiet",
                           env={"FAKE_LLM_KEY": key})
        served = server.stats()["requests"]
    assert recorded.returncode == 0, recorded.stdout + recorded.stderr
    replayed = run_cli("run", "--replay", "recorded", "--root", str(ROOT), "--runs-dir", str(runs), "--quiet",
                       env={"FAKE_LLM_KEY": ""})
    assert replayed.returncode == 0, replayed.stdout + replayed.stderr
    rows = {}
    for results in runs.glob("*/results.csv"):
        with open(results, encoding="utf-8") as handle:
            [rows[results.parent.name]] = list(csv.DictReader(handle))
    original = rows.pop("recorded")
    [replay] = rows.values()
    evaluator_calls = int(original["eval_llm_calls"])
    assert original["status"] == "ok" and evaluator_calls >= 3, original  # three reviews per evaluation
    assert served >= int(original["llm_calls"]) + int(original["measure_llm_calls"])
    for column in ("status", "score_initial", "score_best", "score_final", "llm_calls", "eval_llm_calls",
                   "eval_tokens", "total_tokens"):
        assert replay[column] == original[column], column
    assert replay["cache_hits"] == replay["llm_calls"]

"""The original Trace-Bench's documented Python API, used the way its scripts and notebooks use it."""

from __future__ import annotations

import csv
import inspect
import json
from pathlib import Path
from typing import Any

import pytest


def original_config(tmp_path: Path, **extra: Any) -> Any:
    from trace_bench.config import RunConfig

    cfg = RunConfig.from_dict({
        "tasks": [{"id": "internal:numeric_param"}],
        "trainers": [{"id": "PrioritySearch", "params_variants": [{"ps_steps": 1, "ps_batches": 1}]}],
        "seeds": [123], "mode": "stub", **extra,
    })
    cfg.runs_dir = str(tmp_path / "runs")  # the original's scripts set it after loading
    return cfg


def test_config_names_and_from_dict() -> None:
    from trace_bench.config import RunConfig, TaskConfig, TrainerConfig
    from trace_bench.config.models import TaskEntry, TrainerEntry

    assert TaskConfig is TaskEntry and TrainerConfig is TrainerEntry
    cfg = RunConfig.from_dict({"trainers": [{"id": "PrioritySearch", "params_variants": [{"ps_steps": 2}]}],
                               "runs_root": "elsewhere", "n_concurrent": 2})
    assert cfg.trainers[0].params_variants[0]["ps_steps"] == 2 and cfg.runs_dir == "elsewhere"
    assert cfg.max_workers == 2
    with pytest.raises(ValueError):
        RunConfig.from_dict({"trainers": [{"params_variants": [{}]}]})  # a trainer without an id
    cfg.tasks = [TaskConfig(id="internal:numeric_param", eval_kwargs={"target": 2.0})]
    cfg.trainers = [TrainerConfig(id="NoOpTrainer", params_variants=[{"num_steps": 1}], logger="none")]
    assert cfg.tasks[0].eval_kwargs == {"target": 2.0} and cfg.trainers[0].logger == "none"


def test_bench_runner_run_returns_results_in_the_original_shape(tmp_path: Path) -> None:
    import trace_bench
    from trace_bench.runner import BenchRunner

    assert BenchRunner is trace_bench.BenchRunner
    assert list(inspect.signature(BenchRunner.run).parameters) == ["self", "force"]
    cfg = original_config(tmp_path)
    summary = BenchRunner(cfg).run()
    run_dir = Path(cfg.runs_dir) / summary.run_id
    assert run_dir.is_dir() and summary.exit_code == 0
    row = summary.results[0]
    assert len(summary.results) == 1
    assert {"job_id", "task_id", "suite", "trainer_id", "seed", "status", "score_val_initial", "score_val_final",
            "score_val", "eval_kwargs", "feedback", "resolved_trainer_kwargs", "resolved_optimizer"} <= set(row)
    assert (row["task_id"], row["trainer_id"], row["suite"], row["status"]) == (
        "internal:numeric_param", "PrioritySearch", "internal", "ok")
    assert row["score_val"] == summary.records[0].score_best and row["score_val"] >= row["score_val_initial"]
    assert row["resolved_trainer_kwargs"]["num_steps"] == 1
    with (run_dir / "results.csv").open(encoding="utf-8") as handle:
        assert [r["job_id"] for r in csv.DictReader(handle)] == [row["job_id"]]
    assert (run_dir / "jobs" / row["job_id"] / row["best_state_path"].split("/", 2)[2]).is_file()


def test_run_force_reruns_finished_jobs(tmp_path: Path) -> None:
    from trace_bench.runner import BenchRunner

    cfg = original_config(tmp_path, run_id="fixed-run")
    first = BenchRunner(cfg).run()
    again = BenchRunner(cfg).run()  # resume auto: the finished job is reused, not run again
    forced = BenchRunner(cfg).run(force=True)
    started = [s.results[0]["started_at"] for s in (first, again, forced)]
    assert started[0] == started[1] and started[2] != started[0]
    assert first.run_id == forced.run_id == "fixed-run"


def test_original_task_checks_through_load_task_bundle(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    from trace_bench.registry import load_task_bundle

    for task_id in ("internal:code_param", "example:greeting_stub", "trace_examples:opentrace_greeting"):
        problem = load_task_bundle(task_id, "benchmarks/LLM4AD/benchmark_tasks")
        assert {"param", "guide", "train_dataset", "optimizer_kwargs", "metadata"} <= set(problem)
    problem = load_task_bundle("internal:numeric_param", "benchmarks/LLM4AD/benchmark_tasks",
                               eval_kwargs={"target": 7.0})
    assert problem["train_dataset"]["infos"] == [7.0]
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path))
    with pytest.raises(NotImplementedError, match="dataset not cached"):
        load_task_bundle("hf:strategy_qa", None)  # unavailable here: the original's skip signal
    monkeypatch.setenv("TRACE_BENCH_MODE", "stub")  # Terminal-Bench's stub never invokes Harbor
    stub = load_task_bundle("terminal_bench:regex-log")
    assert stub["guide"].get_feedback("regex-log", "prompt", None)[0] == 0.0
    from opto.trainer.objectives import (
        ObjectiveConfig,  # importable after load_task_bundle, as in the original
    )

    assert isinstance(load_task_bundle("internal:multiobjective_convex")["objective_config"], (dict, ObjectiveConfig))


def test_load_task_module_keeps_package_imports(tmp_path: Path) -> None:
    from trace_bench.registry import load_task_module

    root = tmp_path / "tasks"
    (root / "demo").mkdir(parents=True)
    (root / "index.json").write_text(json.dumps([{"key": "demo", "module": "demo"}]))
    (root / "demo" / "helper.py").write_text("VALUE = 7\n")
    (root / "demo" / "__init__.py").write_text(
        "from .helper import VALUE\n\ndef build_trace_problem(**kwargs):\n    return {}\n")
    assert load_task_module("llm4ad:demo", root).VALUE == 7
    assert load_task_module("internal:numeric_param").__name__ == "trace_bench.tasks.internal.numeric_param"


def test_discovery_records() -> None:
    from trace_bench.registry import (
        discover_internal,
        discover_tasks,
        discover_trace_examples,
        discover_trainers,
    )

    trainers = {spec.id: spec for spec in discover_trainers()}
    assert trainers["PrioritySearch"].available and trainers["PrioritySearch"].source
    assert [spec.id for spec in discover_trainers()] == sorted(trainers, key=str.lower)
    internal = {spec.id for spec in discover_internal()}
    assert {"internal:numeric_param", "internal:multiobjective_bbeh", "internal:multiobjective_gsm8k"} <= internal
    assert "trace_examples:opentrace_greeting" in {spec.id for spec in discover_trace_examples()}
    both = discover_tasks("benchmarks/LLM4AD/benchmark_tasks", bench="internal+trace_examples")
    assert {spec.suite for spec in both} == {"internal", "trace_examples"}
    with pytest.raises(ValueError):
        discover_tasks(None, bench="no_such_suite")


def test_expand_special_tasks_and_matrix(tmp_path: Path) -> None:
    from trace_bench.config import RunConfig, TaskConfig
    from trace_bench.matrix import compute_job_id, expand_matrix
    from trace_bench.registry import expand_special_tasks

    expanded = expand_special_tasks([TaskConfig(id="hf:bbeh_eight", eval_kwargs={"num_train": 3}),
                                     "numeric", {"id": "example:greeting_stub"}, "example:greeting_stub"])
    assert [t.id for t in expanded][:8] == [f"hf:bbeh_eight/{n}" for n in __import__(
        "trace_bench.tasks.hf.catalog", fromlist=["BBEH_EIGHT"]).BBEH_EIGHT]
    assert [t.id for t in expanded][8:] == ["llm4ad:numeric", "trace_examples:greeting_stub"]
    assert expanded[0].eval_kwargs == {"num_train": 3}
    cfg = RunConfig.from_dict({
        "tasks": [{"id": "internal:numeric_param", "eval_kwargs": {"objective_mode": "pareto"}},
                  {"id": "internal:code_param"}],
        "trainers": [{"id": "PrioritySearch", "params_variants": [{"ps_steps": 1}]}, {"id": "GEPA-Base"}],
        "seeds": [1, 2],
    })
    jobs = expand_matrix(cfg)
    assert len(jobs) == 8 and len({j.job_id for j in jobs}) == 8
    first = jobs[0]
    assert (first.task.id, first.task.eval_kwargs, first.trainer.id, first.seed) == (
        "internal:numeric_param", {"objective_mode": "pareto"}, "PrioritySearch", 1)
    assert first.task_id == "internal:numeric_param" and first.suite == "internal"
    assert first.resolved_kwargs["trainer_kwargs"]["num_steps"] == 1
    assert first.resolved_kwargs["eval_kwargs"] == {"objective_mode": "pareto"}
    same = compute_job_id("internal:numeric_param", "PrioritySearch", first.resolved_kwargs, 1)
    assert same == first.job_id
    raw = compute_job_id("internal:code_param", "PrioritySearch", {"ps_steps": 1}, 2)
    assert raw == next(j.job_id for j in jobs if (j.task_id, j.trainer_id, j.seed) == (
        "internal:code_param", "PrioritySearch", 2))
    assert compute_job_id("internal:code_param", "PrioritySearch", {"ps_steps": 1}, 3) != raw


def test_cmd_run_as_trainers_benchmark_calls_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from trace_bench.cli import cmd_run, cmd_validate

    config = tmp_path / "legacy.json"  # trainers_benchmark.py writes a temporary JSON config
    config.write_text(json.dumps({"mode": "stub", "runs_dir": str(tmp_path / "runs"),
                                  "tasks": ["internal:numeric_param"], "ps_steps": 1,
                                  "trainers": [{"id": "PrioritySearch"}]}))
    assert cmd_validate(str(config), "benchmarks/LLM4AD/benchmark_tasks") == 0
    assert cmd_run(config_path=str(config), root="benchmarks/LLM4AD/benchmark_tasks") == 0
    out = capsys.readouterr().out
    assert "[OK]" in out and "Run complete:" in out
    assert len(list((tmp_path / "runs").glob("*/jobs/*/results.json"))) == 1
    bad = tmp_path / "bad.yaml"
    bad.write_text("tasks: [internal:numeric_param]\nmax_wrokers: 2\n")
    assert cmd_run(str(bad)) == 2
    assert "max_workers" in capsys.readouterr().err


def test_trainer_modules_at_the_original_paths() -> None:
    from trace_bench.registry.trainers import resolve_trainer
    from trace_bench.trainers.dspy_trainer import DSPyTrainer
    from trace_bench.trainers.openevolve_trainer import OpenEvolveTrainer
    from trace_bench.trainers.textgrad_trainer import TextGradTrainer

    for cls in (DSPyTrainer, TextGradTrainer, OpenEvolveTrainer):
        assert resolve_trainer(cls.id).cls is cls


def write_entrypoint(root: Path, body: str) -> None:
    package = root / "my_processing_agents"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "optimize_veribench_agent.py").write_text(body)


@pytest.fixture
def fresh_adapter(monkeypatch: pytest.MonkeyPatch) -> Any:
    import sys

    from trace_bench import veribench_adapter
    from trace_bench.legacy import veribench

    veribench._clear_caches()
    yield veribench_adapter
    veribench._clear_caches()
    for name in [n for n in sys.modules if n.split(".")[0] == "my_processing_agents"]:
        monkeypatch.delitem(sys.modules, name)


def test_veribench_adapter_uses_an_entrypoint(fresh_adapter: Any, monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    from trace_bench.registry import expand_special_tasks, load_task_bundle

    write_entrypoint(tmp_path, "TASK_LIST = ['alpha', 'beta', 'alpha']\n"
                     "def build_trace_problem(task_name=None, **kwargs):\n"
                     "    return {'param': object(), 'guide': object(), 'metadata': {'task': task_name, **kwargs},\n"
                     "            'train_dataset': {'inputs': [None], 'infos': [task_name]}}\n")
    monkeypatch.setenv("TRACE_BENCH_VERIBENCH_ROOT", str(tmp_path))
    assert fresh_adapter.discover_task_names() == ["alpha", "beta"]
    assert [t.id for t in expand_special_tasks(["veribench:all"])] == ["veribench:alpha", "veribench:beta"]
    problem = load_task_bundle("veribench:beta", eval_kwargs={"timeout_seconds": 7})
    assert problem["metadata"] == {"task": "beta", "timeout_seconds": 7} and problem["optimizer_kwargs"] == {}


def test_veribench_adapter_without_data_skips(fresh_adapter: Any, monkeypatch: pytest.MonkeyPatch,
                                              tmp_path: Path) -> None:
    from trace_bench.registry import expand_special_tasks, load_task_bundle

    monkeypatch.setenv("TRACE_BENCH_VERIBENCH_ROOT", str(tmp_path / "missing"))
    assert fresh_adapter.discover_task_names() == []
    assert [t.id for t in expand_special_tasks(["veribench:all"])] == ["veribench:smoke_placeholder"]
    with pytest.raises(NotImplementedError):
        load_task_bundle("veribench:smoke_placeholder")
    with pytest.raises(NotImplementedError):
        fresh_adapter.build_bundle("some_task")


def test_llm4ad_root_of_the_original_layout(tmp_path: Path) -> None:
    import sys

    from trace_bench.registry import discover_llm4ad, ensure_llm4ad_importable, load_task_bundle

    root = tmp_path / "benchmark_tasks"
    (root / "demo_task").mkdir(parents=True)
    (tmp_path / "llm4ad_loader.py").write_text("MARK = 'shipped beside the root'\n")
    (root / "index.json").write_text(json.dumps([{"key": "optimization/demo", "module": "demo_task"}]))
    (root / "demo_task" / "__init__.py").write_text(
        "import llm4ad_loader\nfrom opto import trace\n\n"
        "def build_trace_problem(**kwargs):\n"
        "    return {'param': trace.node(1.0, trainable=True), 'guide': lambda x, y, z: (0.0, llm4ad_loader.MARK),\n"
        "            'train_dataset': {'inputs': [0], 'infos': [0]}, 'optimizer_kwargs': {}, 'metadata': {}}\n")
    sys.modules.pop("llm4ad_loader", None)
    try:
        ensure_llm4ad_importable(root)
        assert sys.modules["llm4ad_loader"].MARK == "shipped beside the root"
        assert "llm4ad:optimization/demo" in {spec.id for spec in discover_llm4ad(root)}
        assert load_task_bundle("llm4ad:optimization/demo", str(root))["param"].data == 1.0
    finally:
        sys.modules.pop("llm4ad_loader", None)

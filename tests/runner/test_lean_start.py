"""What a small stub run no longer pays for, and that it still gets the same results: numpy only
for the tasks that use it (and seeded when a job first imports it), one trainer class instead of
the registry, the sandbox view's import scan over statements only, the platform without `uname`."""

from __future__ import annotations

import ast
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import REPO
from trace_bench.config.loader import load_config
from trace_bench.runner.warm import NUMPY, numpy_libraries, peek_preload, preload_for


@pytest.mark.parametrize(("tasks", "numpy"), [
    ("[internal:numeric_param, trace_examples:opentrace_train_single_node]", False),
    ("[{id: internal:code_param}]", False),
    ("[internal:numeric_param, llm4ad:circle_packing]", True),
    ("[circle_packing]", True),  # a bare name is an llm4ad task
    ("[hf:gsm8k]", True),
])
def test_numpy_is_preloaded_only_for_tasks_that_use_it(tmp_path: Path, tasks: str, numpy: bool) -> None:
    config = tmp_path / "c.yaml"
    config.write_text(f"mode: stub\ntasks: {tasks}\ntrainers: [NoOpTrainer]\n", encoding="utf-8")
    assert (set(NUMPY) <= set(peek_preload(config))) is numpy
    if ":" in tasks:  # the driver's own choice from the validated config agrees
        assert (set(NUMPY) <= set(preload_for(load_config(config)))) is numpy
    assert numpy_libraries(None) == NUMPY  # a config the peek cannot read: numpy, as before


def test_a_job_seeds_numpy_when_it_first_imports_it() -> None:
    """A numpy-free template: the job's seed still reaches numpy's global generator, at its import."""
    code = ("import sys\n"
            "from trace_bench.runner.job.body import seed_everything\n"
            "seed_everything(7)\n"
            "assert 'numpy' not in sys.modules\n"
            "import numpy as np\n"
            "first = np.random.rand(3).tolist()\n"
            "np.random.seed(7)\n"
            "assert first == np.random.rand(3).tolist(), first\n"
            "seed_everything(11)\n"  # numpy imported by now: seeded at once
            "again = np.random.rand(2).tolist()\n"
            "np.random.seed(11)\n"
            "assert again == np.random.rand(2).tolist()\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, timeout=120)


def test_one_builtin_trainer_resolves_alone_as_the_registry_would() -> None:
    from trace_bench.registry.trainer_catalog import BUILTIN_TRAINERS
    from trace_bench.registry.trainers import _builtin_alone, all_trainers, resolve_trainer

    for meta in BUILTIN_TRAINERS:
        for name in (meta.id, *meta.aliases):
            alone = _builtin_alone(name.lower())
            if alone is None:
                assert not meta.present()
                continue
            full = all_trainers()[resolve_trainer(name).id]
            assert (alone.id, alone.target, alone.source, alone.cls, alone.reason, alone.origin) == (
                full.id, full.target, full.source, full.cls, full.reason, full.origin), name


def _full_walk(tree: ast.AST, *, in_functions: bool) -> list[ast.AST]:
    """The scan as it was: every node of the tree."""
    found, pending = [], [tree]
    while pending:
        node = pending.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) and not in_functions:
            continue
        pending.extend(ast.iter_child_nodes(node))
    return found


def test_the_sandbox_view_finds_every_import_of_the_package() -> None:
    from trace_bench.sandbox.view import CORE_MODULES, _import_nodes
    from trace_bench.tasks.code_nodes.execution import TARGET_MODULE

    packages = [REPO / "trace_bench" / name for name in ("sandbox", "tasks/code_nodes", "tasks/discovery", "_util")]
    files = [path for package in packages for path in package.rglob("*.py")]
    assert len(files) > 40 and CORE_MODULES and TARGET_MODULE.startswith("trace_bench.tasks.code_nodes")
    for path in sorted(files):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for in_functions in (True, False):
            expected = sorted(ast.dump(node) for node in _full_walk(tree, in_functions=in_functions))
            assert sorted(ast.dump(node) for node in _import_nodes(tree, in_functions=in_functions)) == expected, path


def test_platform_text_is_what_platform_says() -> None:
    from trace_bench.store.environment import platform_text

    assert platform_text() == platform.platform()


@pytest.mark.parametrize(("trainers", "named"), [
    ("[{id: PrioritySearch, params_variants: [{ps_steps: 1}]}, NoopTrainer]", "PrioritySearch,NoopTrainer"),
    ("[]", "PrioritySearch"),  # the default trainer
    ("[PrioritySearch, my_module:MyTrainer]", None),  # a trainer from a module: the template loads every one
    ("[opto:PrioritySearch]", None),
])
def test_the_template_is_told_the_builtin_trainers_a_run_names(tmp_path: Path, trainers: str,
                                                               named: str | None) -> None:
    from trace_bench.runner.warm import peek_trainers, template_trainers

    config = tmp_path / "c.yaml"
    config.write_text(f"mode: stub\ntasks: [internal:numeric_param]\ntrainers: {trainers}\n", encoding="utf-8")
    assert peek_trainers(config) == named
    if named:
        assert template_trainers([entry.id for entry in load_config(config).trainers]) in (named, None)


def test_a_template_told_its_trainers_imports_those_alone() -> None:
    code = ("import sys\n"
            "import trace_bench.runner.job.template\n"
            "from trace_bench.registry.trainers import all_trainers, resolve_trainer\n"
            "loaded = {m for m in sys.modules if m.startswith('trace_bench.trainers.opto_search.')}\n"
            "assert 'trace_bench.trainers.opto_search.priority_search' in loaded, loaded\n"
            "assert 'trace_bench.trainers.opto_search.gepa' not in loaded, loaded\n"
            "assert resolve_trainer('PrioritySearch').id == 'PrioritySearch'\n"
            "assert not all_trainers.cache_info().currsize\n"  # a forked job resolves it without the registry
            "assert 'numpy' not in sys.modules\n")
    env = {**__import__("os").environ, "TRACE_BENCH_TEMPLATE_TRAINERS": "PrioritySearch"}
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, env=env, timeout=120)


def test_the_template_starts_before_the_driver_imports_pydantic(tmp_path: Path) -> None:
    """The CLI peeks at the config to choose the template's preloads before it starts the template;
    the peek parses YAML only, so the template's imports overlap the driver's pydantic and config
    models (the peek imported them first: the template started ~0.2 s later on every run)."""
    config = tmp_path / "c.yaml"
    config.write_text("mode: stub\ntasks: [internal:numeric_param]\ntrainers: [{id: PrioritySearch}]\n",
                      encoding="utf-8")
    code = ("import sys\n"
            "from trace_bench.runner.warm import peek_preload, peek_trainers\n"
            f"assert peek_preload({str(config)!r}) == ('trace_bench.runner.job.template',)\n"
            f"assert peek_trainers({str(config)!r}) == 'PrioritySearch'\n"
            "assert 'pydantic' not in sys.modules and 'trace_bench.config.models' not in sys.modules\n")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=REPO, timeout=120)


_JOB_BUILDS = """
import json, os, sys
from pydantic import BaseModel

def complete():
    found, pending = set(), [BaseModel]
    while pending:
        for sub in pending.pop().__subclasses__():
            pending.append(sub)
            if sub.__pydantic_complete__ and sub.__module__.startswith("trace_bench"):
                found.add(sub.__module__ + "." + sub.__qualname__)
    return found

depth, before, real_exit, out_path = [0], [set()], os._exit, sys.argv[1]

def in_child():
    depth[0] += 1
    if depth[0] == 2:  # the job, forked from the template forked from the driver
        before[0] = complete()
        def leave(code):
            with open(out_path, "w") as out:
                json.dump(sorted(complete() - before[0]), out)
            real_exit(code)
        os._exit = leave

os.register_at_fork(after_in_child=in_child)
config, runs = sys.argv[2:4]
sys.argv = ["trace-bench", "run", "--config", config, "--runs-dir", runs, "--quiet"]
from trace_bench.cli.main import main
main()
"""


def test_a_stub_job_builds_no_record_model_of_its_own(tmp_path: Path) -> None:
    """The records a job writes are built before the template is forked from the driver; the
    driver's own (manifest, summary, the run's events) are built when first used, after the fork
    (``defer_build``, see store/models/_base.py): none is built in the job process."""
    config = tmp_path / "c.yaml"
    config.write_text("tasks: [internal:numeric_param]\ntrainers: [{id: PrioritySearch, ps_steps: 1, ps_batches: 1}]\n"
                      "seeds: [1]\n", encoding="utf-8")
    built = tmp_path / "built.json"
    env = {**os.environ, "PYTHONHASHSEED": "0", "TRACE_BENCH_FORK_TEMPLATE": "1"}
    subprocess.run([sys.executable, "-c", _JOB_BUILDS, str(built), str(config), str(tmp_path / "runs")],
                   check=True, cwd=REPO, env=env, timeout=600)
    assert json.loads(built.read_text(encoding="utf-8")) == []
    from trace_bench.config.models import RunConfig
    from trace_bench.store.models import Manifest

    fresh = subprocess.run([sys.executable, "-c", "import trace_bench.store.models as m, trace_bench.config.models as c\n"
                            "print(m.Manifest.__pydantic_complete__, c.RunConfig.__pydantic_complete__,"
                            " m.JobResult.__pydantic_complete__)"],
                           check=True, cwd=REPO, capture_output=True, text=True, timeout=120).stdout.split()
    assert fresh == ["False", "False", "True"]  # the driver's own records wait for their first use
    assert Manifest.model_fields and RunConfig.model_fields  # and still declare their fields at once

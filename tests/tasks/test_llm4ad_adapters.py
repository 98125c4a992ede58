"""The optional llm4ad package adapter (with a fake package) and the original --root layout."""

from __future__ import annotations

import importlib
import json
import sys
from pathlib import Path
from textwrap import dedent

import pytest

from trace_bench.tasks.llm4ad import legacy_root, llm4ad_package
from trace_bench.tasks.llm4ad.evalkit import FAILURE_SCORE

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="sandboxed evaluation targets Linux")


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(dedent(text), encoding="utf-8")


@pytest.fixture
def fake_llm4ad(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    base = tmp_path / "site"
    write(base / "llm4ad" / "__init__.py", "IMPORTED = True\n")
    write(base / "llm4ad" / "task" / "__init__.py", "")
    write(base / "llm4ad" / "task" / "optimization" / "__init__.py", "")
    write(base / "llm4ad" / "task" / "optimization" / "pick_max" / "__init__.py", "")
    write(base / "llm4ad" / "task" / "optimization" / "pick_max" / "evaluation.py", '''
        template_program = """def pick(values):
            return values[0]
        """
        task_description = "Return the largest of the values."


        class PickMaxEvaluation:
            def __init__(self, **kwargs):
                self.template_program = template_program
                self.task_description = task_description

            def evaluate_program(self, program_str, callable_func):
                answer = callable_func([3.0, 9.0, 4.0])
                return None if answer is None else float(answer)
        ''')
    write(base / "llm4ad" / "task" / "optimization" / "pick_max" / "answers.txt", "9.0\n")
    write(base / "llm4ad" / "task" / "optimization" / "run_it" / "__init__.py", "")
    write(base / "llm4ad" / "task" / "optimization" / "run_it" / "evaluation.py", '''
        template_program = """def pick(values):
            return values[0]
        """


        class RunItEvaluation:
            def evaluate_program(self, program_str, callable_func):
                namespace = {}
                exec(program_str, namespace)  # an evaluator that runs the candidate in its own process
                return float(namespace["pick"]([1.0, 2.0]))
        ''')
    monkeypatch.syspath_prepend(str(base))
    importlib.invalidate_caches()
    yield base
    for name in [m for m in sys.modules if m == "llm4ad" or m.startswith("llm4ad.")]:
        del sys.modules[name]


def test_package_tasks_listed_unavailable_without_llm4ad() -> None:
    if llm4ad_package.package_root() is not None:
        pytest.skip("llm4ad is installed here")
    specs = llm4ad_package.discover_package()
    assert len(specs) == len(llm4ad_package.KNOWN_TASKS) == 26
    assert all(s.unavailable_reason() == llm4ad_package.INSTALL_HINT for s in specs)
    assert "llm4ad:pkg/optimization/tsp_construct" in {s.id for s in specs}
    with pytest.raises(ImportError, match="pip install --no-deps llm4ad"):
        llm4ad_package.build_trace_problem(task="optimization/tsp_construct")


def test_package_tasks_from_a_fake_llm4ad(fake_llm4ad: Path) -> None:
    specs = llm4ad_package.discover_package()
    assert [s.id for s in specs] == ["llm4ad:pkg/optimization/pick_max", "llm4ad:pkg/optimization/run_it"]
    assert specs[0].unavailable_reason() is None
    assert "llm4ad" not in sys.modules  # discovery never imports the package

    problem = llm4ad_package.build_trace_problem(**specs[0].default_eval_kwargs, timeout_seconds=10)
    assert problem["param"].data.startswith("def pick(values):")
    assert "def pick(values)" in problem["param"].description
    assert problem["metadata"]["entry"] == "pick"
    guide, info = problem["guide"], problem["train_dataset"]["infos"][0]
    assert guide.get_feedback("", problem["param"].data, info)[0] == 3.0
    assert guide.get_feedback("", "def pick(values):\n    return max(values)\n", info)[0] == 9.0
    value, feedback = guide.get_feedback("", "def pick(values):\n    return None\n", info)
    assert value == FAILURE_SCORE and feedback.startswith("TRACE_FEEDBACK_JSON=")


def test_a_package_candidate_sees_neither_the_evaluator_nor_its_data(fake_llm4ad: Path) -> None:
    """The package's evaluator (and its data) and the candidate run in two sandboxed processes."""
    problem = llm4ad_package.build_trace_problem(task="optimization/pick_max", timeout_seconds=20)
    guide, info = problem["guide"], problem["train_dataset"]["infos"][0]
    answers = fake_llm4ad / "llm4ad" / "task" / "optimization" / "pick_max" / "answers.txt"
    for attack in (f"def pick(values):\n    return float(open({str(answers)!r}).read())\n",
                   "def pick(values):\n    from llm4ad.task.optimization.pick_max import evaluation\n    return 9.0\n",
                   "def pick(values):\n    import gc\n    return max(len(gc.get_objects()), 9.0)\n"):
        value, feedback = guide.get_feedback("", attack, info)
        assert value in (FAILURE_SCORE, 0.0) or value > 9.0, (attack, value, feedback)
        assert value != 9.0  # never the answer without computing it
    honest = guide.get_feedback("", "def pick(values):\n    return max(values)\n", info)
    assert honest[0] == 9.0, honest
    run_it = llm4ad_package.build_trace_problem(task="optimization/run_it", timeout_seconds=20)
    value, feedback = run_it["guide"].get_feedback("", "def pick(values):\n    return max(values)\n",
                                                   run_it["train_dataset"]["infos"][0])
    assert value == FAILURE_SCORE and "candidate's code in its own process" in feedback


@pytest.fixture
def legacy_tree(tmp_path: Path) -> Path:
    bench = tmp_path / "benchmarks" / "LLM4AD"
    root = bench / "benchmark_tasks"
    write(bench / "llm4ad_loader.py", "MARK = 'loader from the original layout'\n")
    index = [
        {"key": "optimization/task_a", "module": "optimization_task_a", "task_description": "Task A.\nMore."},
        {"key": "task_b", "module": "task_b"},
        {"key": "ghost", "module": "missing_dir"},
    ]
    write(root / "index.json", json.dumps(index))
    for name, value in (("optimization_task_a", 1), ("task_b", 2)):
        write(root / name / "get_instance.py", f"VALUE = {value}\n")
        write(root / name / "helper.py", f"HELP = 'helper {name}'\n")
        write(root / name / "__init__.py", '''
            import llm4ad_loader
            from get_instance import VALUE

            from .helper import HELP

            from opto import trace

            from trace_bench.tasks.guide import Guide


            class EchoGuide(Guide):
                def get_feedback(self, query, response, reference=None, **kwargs):
                    return float(len(response)), "length"


            def build_trace_problem(**eval_kwargs):
                return {
                    "param": trace.node("def f():\\n    return 0\\n", name="__code", trainable=True),
                    "guide": EchoGuide(),
                    "train_dataset": {"inputs": ["x"], "infos": [None]},
                    "optimizer_kwargs": {"objective": "o", "memory_size": 10},
                    "metadata": {"value": VALUE, "help": HELP, "loader": llm4ad_loader.MARK, "kwargs": eval_kwargs},
                }
            ''')
    return root


def test_legacy_root_discovery_and_loading(legacy_tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delitem(sys.modules, legacy_root.LOADER_NAME, raising=False)
    specs = {s.id: s for s in legacy_root.discover_root(legacy_tree)}
    assert set(specs) == {"llm4ad:optimization/task_a", "llm4ad:task_b", "llm4ad:ghost"}
    assert specs["llm4ad:optimization/task_a"].description == "Task A."
    assert specs["llm4ad:task_b"].module_path == str(legacy_tree.resolve() / "task_b")
    assert "not found" in (specs["llm4ad:ghost"].unavailable_reason() or "")

    path_before = list(sys.path)
    a = legacy_root.load_root_problem(specs["llm4ad:optimization/task_a"], {"seed": 5})
    b = legacy_root.load_root_problem(specs["llm4ad:task_b"], {})
    assert (a["metadata"]["value"], b["metadata"]["value"]) == (1, 2)  # sibling modules never shared
    assert a["metadata"]["help"] == "helper optimization_task_a" and a["metadata"]["kwargs"] == {"seed": 5}
    assert a["metadata"]["loader"] == "loader from the original layout"
    assert sys.path == path_before and "get_instance" not in sys.modules
    monkeypatch.delitem(sys.modules, legacy_root.LOADER_NAME, raising=False)


def test_legacy_root_through_the_task_catalog(legacy_tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from trace_bench.registry.tasks import TaskCatalog

    monkeypatch.delitem(sys.modules, legacy_root.LOADER_NAME, raising=False)
    catalog = TaskCatalog.create(root=legacy_tree)
    problem = catalog.build("optimization/task_a", {"n": 1})
    assert problem["metadata"]["value"] == 1 and problem["metadata"]["kwargs"] == {"n": 1}
    monkeypatch.delitem(sys.modules, legacy_root.LOADER_NAME, raising=False)


def test_legacy_root_errors_name_the_path(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist"):
        legacy_root.discover_root(tmp_path / "nowhere")
    with pytest.raises(ValueError, match="no index.json"):
        legacy_root.discover_root(tmp_path)
    (tmp_path / "index.json").write_text("{not json", encoding="utf-8")
    with pytest.raises(ValueError, match=r"index\.json: not valid JSON"):
        legacy_root.discover_root(tmp_path)
    (tmp_path / "index.json").write_text(json.dumps([{"module": "x"}]), encoding="utf-8")
    with pytest.raises(ValueError, match="entry #0 has no 'key'"):
        legacy_root.discover_root(tmp_path)
    (tmp_path / "index.json").write_text(json.dumps([{"key": "k"}]), encoding="utf-8")
    with pytest.raises(ValueError, match="has no 'module'"):
        legacy_root.discover_root(tmp_path)
    (tmp_path / "index.json").write_text(json.dumps("text"), encoding="utf-8")
    with pytest.raises(ValueError, match="expected a list"):
        legacy_root.discover_root(tmp_path)

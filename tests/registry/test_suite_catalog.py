"""One registry shape for suites: each built-in suite declares its metadata in
trace_bench/tasks/suites.json (module, hooks, the library its jobs preload, opt-in, numpy-free), and
the registry answers every suite through the one Suite protocol, with no hook looked up by hasattr."""

from __future__ import annotations

import importlib
import types
from pathlib import Path

import pytest

from trace_bench.registry import tasks as registry
from trace_bench.registry.suite_catalog import BUILTIN_SUITE_ROWS, ModuleSuite
from trace_bench.runner.warm import NUMPY_FREE_SUITES, SUITE_LIBRARIES, task_libraries
from trace_bench.tasks.spec import TaskSpec
from trace_bench.tasks.suite import HOOKS, Suite

ROWS = {row.name: row for row in BUILTIN_SUITE_ROWS}


@pytest.mark.parametrize("name", sorted(ROWS))
def test_a_suites_row_declares_exactly_the_hooks_its_module_defines(name: str) -> None:
    module = importlib.import_module(ROWS[name].module)
    assert module.SUITE == name
    assert set(ROWS[name].hooks) == {hook for hook in HOOKS if callable(getattr(module, hook, None))}
    assert isinstance(registry._suite_module(name), Suite)


def test_the_registry_and_the_template_read_the_suites_rows() -> None:
    assert list(registry.BUILTIN_SUITES) == [row.name for row in BUILTIN_SUITE_ROWS]
    assert registry.OPT_IN_SUITES == {"terminal_bench"}
    assert SUITE_LIBRARIES == {"reasoning_gym": "reasoning_gym"}
    assert NUMPY_FREE_SUITES == {"internal", "trace_examples"}
    assert task_libraries(["reasoning_gym:leg_counting", "internal:numeric_param"]) == ("reasoning_gym",)


def _spec() -> TaskSpec:
    return TaskSpec(id="demo:t", suite="demo", module="json", builder="loads", description="d")


def test_a_suite_without_hooks_answers_the_defaults() -> None:
    suite = ModuleSuite("demo", types.ModuleType("demo"), ())
    spec = _spec()
    assert (suite.resolve("demo:x"), suite.expand("demo:x"), suite.available_with(spec, {})) == (None, [], None)
    assert suite.build(spec, {"s": "[1]"}) == [1]  # spec.module's builder


def test_a_declared_hook_is_called_and_an_undeclared_function_is_not() -> None:
    module = types.ModuleType("demo")
    module.expand = lambda task_id: ["demo:a", "demo:b"]  # type: ignore[attr-defined]
    module.resolve = lambda task_id: _spec()  # type: ignore[attr-defined]
    suite = ModuleSuite("demo", module, ("expand",))
    assert suite.expand("demo:all") == ["demo:a", "demo:b"] and suite.resolve("demo:t") is None
    assert ModuleSuite.of_plugin("demo", module).resolve("demo:t") == _spec()  # a plugin without HOOKS
    module.HOOKS = ("expand",)  # type: ignore[attr-defined]
    assert ModuleSuite.of_plugin("demo", module).resolve("demo:t") is None
    with pytest.raises(ValueError, match="unknown hooks"):
        ModuleSuite("demo", module, ("discover_more",))
    with pytest.raises(AttributeError):
        ModuleSuite("demo", module, ("build",))  # declared, not defined


def test_the_catalog_lies_beside_the_suites() -> None:
    assert (Path(registry.__file__).resolve().parents[1] / "tasks" / "suites.json").is_file()

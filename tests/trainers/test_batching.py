"""A minibatch whose rollouts share one output node (the parameter is the output) can be updated.

On tasks whose trainable parameter is itself what the guide scores (internal:multiobjective_bbeh's
program, internal:multiobjective_convex's point), every rollout of a state returns the same node.
Batched into one traced op, that node used to appear once per rollout, and opto's optimizer
refused the repeated feedback (``GraphPropagator.aggregate`` asserts one per child): every trainer
that batches two rollouts (UCBSearchAlgorithm, GEPA-Base, MinibatchAlgorithm with batch_size 2)
ended ``failed`` with a bare AssertionError.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from trace_bench.testing.trainer_contract import check_curve, run_trainer
from trace_bench.trainers.evaluate import Rollout, batchify


def _rollout(output: object, feedback: str) -> Rollout:
    return Rollout(input="q", info="a", output=output, score=0.0, feedback=feedback)


def test_shared_parameter_output_backpropagates_once() -> None:
    """Two rollouts of a parameter-as-output: the optimizer sees one node and both feedbacks."""
    from opto import trace
    from opto.optimizers import OptoPrime

    param = trace.node(1.0, name="x", trainable=True)
    output, feedback = batchify([_rollout(param, "too low, increase"), _rollout(param, "off by 2")])
    assert output is param
    assert feedback.splitlines() == ["Example [0]: too low, increase", "Example [1]: off by 2"]
    optimizer = OptoPrime([param], llm=object())
    optimizer.zero_feedback()
    optimizer.backward(output, feedback)
    summary = optimizer.summarize()  # asserted one feedback per child before the fix
    assert "off by 2" in summary.user_feedback


def test_mixed_outputs_keep_ids_aligned() -> None:
    """Distinct outputs enter the op once each; every feedback line names its output's ID there."""
    from opto import trace
    from opto.optimizers import OptoPrime

    param = trace.node(2.0, name="y", trainable=True)
    @trace.bundle()
    def double(v: float) -> float:
        """Twice the value."""
        return v * 2

    first, second = double(param), double(param)
    output, feedback = batchify([_rollout(first, "a"), _rollout(second, "b"), _rollout(first, "c")])
    assert [p for p in output.parents] == [first, second]
    assert output.data.splitlines() == ["ID [0]: 4.0", "ID [1]: 4.0"]
    assert feedback.splitlines() == ["ID [0]: a", "ID [1]: b", "ID [0]: c"]
    optimizer = OptoPrime([param], llm=object())
    optimizer.zero_feedback()
    optimizer.backward(output, feedback)
    optimizer.summarize()


@pytest.mark.parametrize(("trainer_id", "params"), [
    ("UCBSearchAlgorithm", {"num_search_iterations": 2, "evaluation_batch_size": 2}),
    ("GEPA-Base", {"gepa_iters": 2}),
])
def test_batching_trainers_run_multiobjective_bbeh(trainer_id: str, params: dict[str, int], tmp_path: Path) -> None:
    outcome = run_trainer(trainer_id, tmp_path, task="internal:multiobjective_bbeh", params=params,
                          eval_kwargs={"n_train": 4, "n_val": 2})
    result = outcome.result
    assert result.status == "ok", f"{result.error}\n{result.traceback}"
    assert result.n_steps >= 1 and result.llm_calls >= 1
    check_curve(outcome)


def test_minibatch_of_two_on_a_parameter_output_task(tmp_path: Path) -> None:
    outcome = run_trainer("MinibatchAlgorithm", tmp_path, task="internal:multiobjective_convex",
                          params={"num_steps": 2, "batch_size": 2})
    assert outcome.result.status == "ok", f"{outcome.result.error}\n{outcome.result.traceback}"
    assert outcome.result.llm_calls >= 1

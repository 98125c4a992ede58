"""``trace_bench.integrations.opto``: the original's evaluation API for external optimizers."""

from __future__ import annotations

from typing import Any

import pytest


class Valued:
    def __init__(self, data: Any) -> None:
        self.data = data


class RewardGuide:
    def __call__(self, x: Any, response: Any, info: Any) -> tuple[float, str]:
        return (1.0 if response == info else 0.0), f"got {response}"

    def get_score_dict(self, x: Any, response: Any, info: Any) -> dict[str, float]:
        if info == "broken":
            raise RuntimeError("scorer down")
        return {"hit": float(response == info)}


def problem(**over: Any) -> dict[str, Any]:
    return {"param": Valued("A"), "guide": RewardGuide(),
            "train_dataset": {"inputs": [1, 2, 3], "infos": ["A", "B", "A"]}, **over}


def test_exports_and_validation_split_first() -> None:
    import trace_bench.integrations as integrations
    from trace_bench.integrations.opto import BundleEval, evaluate_bundle

    assert set(integrations.__all__) == {"BundleEval", "evaluate_bundle", "load_and_evaluate"}
    mean, records = evaluate_bundle(problem(), max_examples=3)
    assert mean == pytest.approx(2 / 3) and [r.reward for r in records] == [1.0, 0.0, 1.0]
    assert isinstance(records[0], BundleEval) and records[1].score_dict == {"hit": 0.0}
    mean, records = evaluate_bundle(problem(validate_dataset={"inputs": [9], "infos": ["B"]}), max_examples=5)
    assert (mean, len(records)) == (0.0, 1)


def test_agents_are_called_and_failures_are_explicit() -> None:
    from trace_bench.integrations.opto import evaluate_bundle

    mean, records = evaluate_bundle(problem(param=lambda x: Valued("A" if x != 2 else "B")), max_examples=2)
    assert mean == 1.0 and records[1].feedback == "got B"
    with pytest.raises(ValueError, match="no evaluable examples"):
        evaluate_bundle(problem(train_dataset={"inputs": [], "infos": []}))
    broken = problem(train_dataset={"inputs": [1], "infos": ["broken"]})
    assert evaluate_bundle(broken)[1][0].score_dict is None
    with pytest.raises(RuntimeError, match="scorer down"):
        evaluate_bundle(broken, strict_score_dict=True)


def test_load_and_evaluate_a_real_task() -> None:
    from trace_bench.integrations.opto import load_and_evaluate

    built, mean, records = load_and_evaluate("trace_examples:opentrace_train_single_node")
    assert mean == -3.0 and records[0].feedback.startswith("target=3;") and "param" in built
    built, mean, records = load_and_evaluate("internal:multiobjective_convex", eval_kwargs={"objective_mode": "pareto"})
    assert set(records[0].score_dict or {}) == {"base_loss", "reg_loss"}
    assert built["objective_config"].mode == "pareto" and built["metadata"]["objective_mode"] == "pareto"

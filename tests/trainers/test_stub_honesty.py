"""An honest stub: over 40 steps of any trainer, the stub never lands exactly on a toy task's optimum
nor proposes its canonical solution, while its proposals keep improving on the initial state.

Before, numeric_param ended at x = 3.0 exactly in most jobs (the stub rounded its steps to six
decimals and stepped onto the value the feedback pointed at), multi_param's a + b reached 3.0, the
integer tasks reached their target, a code_param candidate became fully right by changing its
threshold, and opentrace_train_single_node shipped its hidden number as a stub candidate.
"""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from tests.trainers.optima import KNOWN_OPTIMUM
from trace_bench.llm.stub_mutations import RESOLUTION, Hint, implied_target, numeric_proposal
from trace_bench.testing.trainer_contract import run_trainer


def _require(package: str) -> None:
    """Skip without the package, without importing it (textgrad writes ./logs when imported directly;
    the trainer imports it with its log directory set)."""
    import importlib.util

    if importlib.util.find_spec(package) is None:
        pytest.skip(f"{package} is not installed")


# Not here: internal:opentrace_greeting and internal:multiobjective_bbeh start at their optimum (the
# tasks check that a trainer keeps a working agent working), internal:non_trainable has nothing to
# train, and internal:multiobjective_gsm8k is checked below on its error objective.

# canonical solutions no proposal may be
CANONICAL = {
    "internal:code_param": "return 2 * x + 1\n",
    "trace_examples:greeting_stub": "Hello",
}

# every way the stub answers an optimizer: OptoPrime, OPRO and TextGrad prompts, a search trainer that
# picks the best of several proposals, and the libraries' own formats (gepa, textgrad, OpenEvolve)
TRAINERS: dict[str, tuple[str, dict[str, Any], str | None]] = {
    "OptoPrime": ("MinibatchAlgorithm", {"num_steps": 40}, None),
    "OPRO": ("MinibatchAlgorithm", {"num_steps": 40}, "OPRO"),
    "TextGrad": ("MinibatchAlgorithm", {"num_steps": 40}, "TextGrad"),
    "BasicSearch": ("BasicSearchAlgorithm", {"num_steps": 40, "num_proposals": 3}, None),
    "GEPA-Base": ("GEPA-Base", {"num_steps": 40}, None),
    "GEPATrainer": ("GEPATrainer", {"max_metric_calls": 120}, None),
    "TextGradTrainer": ("TextGradTrainer", {"num_steps": 40}, None),
    "OpenEvolveTrainer": ("OpenEvolveTrainer", {"iterations": 40}, None),
}
EXTRAS = {"GEPATrainer": "gepa", "TextGradTrainer": "textgrad", "OpenEvolveTrainer": "openevolve"}


def _states(outcome: Any) -> list[list[Any]]:
    return [[p.value for p in line.state.parameters] for line in outcome.job.read_state_history()]


@pytest.mark.parametrize("trainer", sorted(TRAINERS))
def test_no_trainer_reaches_a_toy_optimum_in_40_steps(trainer: str, tmp_path: Path) -> None:
    if trainer in EXTRAS:
        _require(EXTRAS[trainer])
    trainer_id, params, optimizer = TRAINERS[trainer]
    improved = []
    for task, optimum in KNOWN_OPTIMUM.items():
        outcome = run_trainer(trainer_id, tmp_path, task=task, params=params, optimizer=optimizer, seed=2,
                              run_name=f"{trainer}-{task}".replace(":", "_"))
        result = outcome.result
        assert result.status == "ok", (task, result.error)
        scores = [float(row["score"]) for row in outcome.curve() if row["score"] not in ("", None)]
        assert max(scores) < optimum, f"{trainer} on {task}: a state scored {max(scores)}, the optimum"
        canonical = CANONICAL.get(task)
        if canonical is not None:
            assert not any(str(v).strip().endswith(canonical.strip()) or str(v) == canonical
                           for state in _states(outcome) for v in state), f"{trainer} on {task}: canonical"
        improved.append(result.score_best > result.score_initial)
    assert sum(improved) >= len(KNOWN_OPTIMUM) - 1, f"{trainer}: improved on only {sum(improved)} of {len(KNOWN_OPTIMUM)} tasks"


def test_the_stub_agent_never_solves_every_gsm8k_question(tmp_path: Path) -> None:
    outcome = run_trainer("MinibatchAlgorithm", tmp_path, task="internal:multiobjective_gsm8k",
                          params={"num_steps": 40}, seed=1)
    assert outcome.result.status == "ok", outcome.result.error
    assert outcome.result.score_dict_best["error"] > 0


@pytest.mark.parametrize("integer", [False, True])
def test_a_numeric_proposal_never_lands_on_the_value_the_feedback_points_at(integer: bool) -> None:
    rng = random.Random(7)
    for _ in range(20000):
        value = rng.choice([0.0, 1.0, 2.9, -4.0, 1e3]) + (0 if integer else rng.uniform(-1, 1))
        value = float(round(value)) if integer else value
        distance = rng.choice([3.0, 1.0, 0.01, 1e-5, 1e-9]) if not integer else float(rng.randint(1, 4))
        hint = Hint(rng.choice([1, -1]), distance)
        share = rng.choice([1.0, 0.5])
        target = implied_target(value, hint, share)
        assert target is not None
        proposal = numeric_proposal(value, hint, rng, share=share, integer=integer)
        if integer:
            assert proposal != round(target)
        else:
            assert abs(proposal - target) >= RESOLUTION * max(1.0, abs(target)) * 0.999
            assert abs(proposal - value) >= RESOLUTION * max(1.0, abs(value)), "a move finer than the resolution"


def _held_out_score(source: str, inputs: list[Any], infos: list[Any]) -> float:
    namespace: dict[str, Any] = {}
    exec(source, namespace)  # noqa: S102 - the task's own stub candidates, in the test process
    transform = namespace["transform"]
    return sum(transform(None, x) == y for x, y in zip(inputs, infos, strict=True)) / len(inputs)


def test_no_modulus_of_code_params_stub_candidates_solves_its_test_split() -> None:
    """code_param is ranked on its held-out test split.  Its stub candidates are right except where
    ``x % k`` is 0, and the stub changes ``k``: with the test inputs 3, 7 and 100, a modulus such as 6
    or 8 scored 1.0 on test (UCBSearch, Beamsearch and SkyDiscover runs of 40 steps did, 5 of 8 jobs),
    so arms tied at rank 1 with test_best 1 [1, 1], as the issue says an honest stub must not allow."""
    import re

    from trace_bench.registry.tasks import TaskCatalog

    raw = TaskCatalog.create().build("internal:code_param", {})
    test = raw["test_dataset"]
    family = [c for c in raw["stub_candidates"] if re.search(r"x % \d+", c)]
    assert family
    for candidate in family:
        for modulus in range(1, 2000):
            source = re.sub(r"x % \d+", f"x % {modulus}", candidate)
            assert _held_out_score(source, test["inputs"], test["infos"]) < 1.0, source
    for candidate in raw["stub_candidates"]:
        assert _held_out_score(candidate, test["inputs"], test["infos"]) < 1.0, candidate
    right = "def transform(self, x):\n    return 2 * x + 1\n"
    assert _held_out_score(right, test["inputs"], test["infos"]) == 1.0, "the test split is still solvable"

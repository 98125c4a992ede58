"""Knobs: original names and defaults, family-wide aliases, and errors that list the allowed names."""

from __future__ import annotations

from typing import Any

import pytest

from trace_bench.config import ConfigError, parse_config
from trace_bench.matrix.expand import expand_matrix
from trace_bench.registry.tasks import TaskCatalog
from trace_bench.registry.trainers import resolve_trainer


def resolved(trainer_id: str, knobs: dict[str, Any]) -> dict[str, Any]:
    config = parse_config({"tasks": ["internal:numeric_param"],
                           "trainers": [{"id": trainer_id, "params_variants": [knobs]}]})
    (job,) = expand_matrix(config, TaskCatalog.create())
    return job.trainer_kwargs


@pytest.mark.parametrize("trainer_id", ["PrioritySearch", "StreamingPrioritySearch"])
def test_priority_search_family_aliases(trainer_id: str) -> None:
    kwargs = resolved(trainer_id, {"ps_steps": 2, "ps_batches": 3, "ps_candidates": 4, "ps_proposals": 5,
                                   "ps_mem_update": 6, "threads": 2})
    assert (kwargs["num_steps"], kwargs["num_batches"], kwargs["num_candidates"], kwargs["num_proposals"],
            kwargs["memory_update_frequency"], kwargs["num_threads"]) == (2, 3, 4, 5, 6, 2)


@pytest.mark.parametrize(("trainer_id", "iterations"), [
    ("GEPA-Base", "num_iters"), ("GEPA-UCB", "num_search_iterations"),
    ("GEPA-Beam", "num_search_iterations")])
def test_gepa_family_aliases(trainer_id: str, iterations: str) -> None:
    kwargs = resolved(trainer_id, {"gepa_iters": 7, "gepa_train_bs": 3, "gepa_merge_every": 2,
                                   "gepa_pareto_subset": 5, "threads": 2})
    names = (iterations, "train_batch_size", "merge_every", "pareto_subset_size", "num_threads")
    assert tuple(kwargs[name] for name in names) == (7, 3, 2, 5, 2)


def test_canonical_name_wins_over_alias() -> None:
    assert resolved("PrioritySearch", {"ps_steps": 2, "num_steps": 9})["num_steps"] == 9


@pytest.mark.parametrize(("alias", "trainer_id"), [
    ("BeamSearch", "BeamsearchAlgorithm"), ("Minibatch", "MinibatchAlgorithm"),
    ("GEPAAlgorithmBase", "GEPA-Base"),
    ("GEPAUCBSearch", "GEPA-UCB"), ("GEPABeamPareto", "GEPA-Beam"), ("UCBSearch", "UCBSearchAlgorithm"),
    ("BasicSearch", "BasicSearchAlgorithm")])
def test_trainer_aliases(alias: str, trainer_id: str) -> None:
    assert resolve_trainer(alias).id == trainer_id


DEFAULTS = {
    "PrioritySearch": {"num_candidates": 10, "num_proposals": 1, "num_batches": 1, "batch_size": 1,
                       "num_epochs": 1, "num_steps": None, "memory_update_frequency": 0,
                       "score_function": "mean", "ucb_exploration_constant": 1.0, "decouple_optimizers": True,
                       "validate_exploration_candidates": True, "use_best_candidate_to_explore": True},
    "StreamingPrioritySearch": {"exploration_ratio": 0.5, "exploration_temperature": 1.0,
                                "num_candidates": 10},
    "GEPA-Base": {"num_iters": 100, "train_batch_size": 2, "merge_every": 5, "pareto_subset_size": 24,
                  "rng_seed": 13},
    "GEPA-UCB": {"num_search_iterations": 120, "merge_every": 6, "max_buffer_size": 16,
                 "ucb_exploration_factor": 0.8, "rng_seed": 7, "log_frequency": 5},
    "GEPA-Beam": {"num_search_iterations": 120, "merge_every": 6, "rng_seed": 11},
    "BeamsearchAlgorithm": {"beam_width": 3, "num_proposals": 4, "max_depth": 2, "validation_dataset_size": 5,
                            "batch_size": 1, "test_frequency": 4},
    "BeamsearchHistoryAlgorithm": {"num_proposals": 1, "test_frequency": 5, "max_history_size": 10},
    "UCBSearchAlgorithm": {"max_buffer_size": 10, "ucb_exploration_factor": 1.0, "num_search_iterations": 100,
                           "train_batch_size": 2, "evaluation_batch_size": 20},
    "MinibatchAlgorithm": {"num_epochs": 1, "batch_size": 1, "ensure_improvement": True,
                           "improvement_threshold": 0.0},
    "BasicSearchAlgorithm": {"num_proposals": 4, "ensure_improvement": True},
}


@pytest.mark.parametrize("trainer_id", sorted(DEFAULTS))
def test_original_defaults(trainer_id: str) -> None:
    params = resolve_trainer(trainer_id).cls.Params()
    for name, value in DEFAULTS[trainer_id].items():
        assert getattr(params, name) == value, name


def test_unknown_knob_lists_allowed_names() -> None:
    with pytest.raises(ConfigError) as info:
        resolved("GEPA-UCB", {"completely_unknown": 1})
    message = str(info.value)
    assert "unknown knob 'completely_unknown'" in message
    for name in ("num_search_iterations", "gepa_iters", "merge_every", "pareto_subset_size", "threads"):
        assert name in message


def test_ucb_priority_needs_a_finite_range() -> None:
    with pytest.raises(ConfigError, match="score_range"):
        resolved("PrioritySearch", {"score_function": "ucb"})
    kwargs = resolved("PrioritySearch", {"score_function": "ucb", "score_range": [0, 1]})
    assert kwargs["score_range"] == [0.0, 1.0]

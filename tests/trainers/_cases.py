"""Short knob settings per built-in trainer, so the whole trainer suite stays fast."""

from __future__ import annotations

from typing import Any

SHORT: dict[str, dict[str, Any]] = {
    "PrioritySearch": {"ps_steps": 3, "ps_candidates": 3, "ps_proposals": 2},
    "StreamingPrioritySearch": {"ps_steps": 4, "ps_candidates": 3, "ps_proposals": 2},
    "GEPA-Base": {"gepa_iters": 5, "gepa_merge_every": 2},
    "GEPA-UCB": {"gepa_iters": 5, "gepa_merge_every": 2},
    "GEPA-Beam": {"gepa_iters": 5, "gepa_merge_every": 2},
    "BeamsearchAlgorithm": {"max_depth": 3, "beam_width": 2, "num_proposals": 2},
    "BeamsearchHistoryAlgorithm": {"max_depth": 3, "beam_width": 2},
    "UCBSearchAlgorithm": {"num_search_iterations": 5, "evaluation_batch_size": 3},
    "MinibatchAlgorithm": {"num_steps": 5},
    "BasicSearchAlgorithm": {"num_steps": 4, "num_proposals": 2},
}

ALL = {**SHORT, "NoOpTrainer": {"num_steps": 2}, "RandomSearch": {"samples": 3}, "OptunaSearch": {"samples": 3}}

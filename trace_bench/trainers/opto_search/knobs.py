"""Knobs the original trainers take for logging, testing and checkpointing.

The harness itself scores every reported state on the selection split, writes curves and saves
best/final states, so these knobs change nothing here.  They are accepted so configs written for
the original trainers validate unchanged; their descriptions say so in ``list-trainers``.
"""

from __future__ import annotations

from pydantic import Field

from trace_bench.trainers.base import TrainerParams

_HARNESS = "accepted for compatibility; the harness measures and saves every step itself"


class SearchParams(TrainerParams):
    test_frequency: int | None = Field(default=1, description=_HARNESS)
    num_test_samples: int = Field(default=1, ge=1, description=_HARNESS)
    log_frequency: int | None = Field(default=None, description=_HARNESS)
    save_frequency: int | None = Field(default=None, description=_HARNESS)

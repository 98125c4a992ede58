"""The ``race:`` block: racing of seeds (F-Race, Birattari et al. 2002; irace, López-Ibáñez et al. 2016).

A raced run starts every arm (trainer x params variant, per task) on its first ``min_seeds`` seeds,
then adds seeds in rounds only to the arms the verdict's paired test cannot yet separate from the
task's leader, and stops an arm the test finds worse (``trace_bench.runner.race``).  The seeds are
the config's ``seeds``, in their order, up to ``max_seeds``: a raced run's jobs are the jobs of the
full matrix (same ids, same scores), fewer of them.

Kept apart from :mod:`trace_bench.config.models` so the block is one self-contained model; the
run config holds it as ``race`` (``None``: every arm gets every seed).
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator

#: the verdict's level (``trace_bench.store.paired.ALPHA``; the config layer imports nothing above it)
DEFAULT_ALPHA = 0.05


class RaceConfig(BaseModel):
    """How a raced run spends its seeds (docs/config-reference.md, "Race")."""

    model_config = ConfigDict(extra="forbid", frozen=True, allow_inf_nan=False, defer_build=True)

    min_seeds: int = Field(default=3, ge=2, description="seeds every arm runs before the first test (the paired "
                           "test needs two)")
    max_seeds: int | None = Field(default=None, ge=2, description="seeds an arm runs at most; default: every seed "
                                  "the config lists")
    alpha: float = Field(default=DEFAULT_ALPHA, gt=0, lt=1, description="level of the verdict's test (Holm-corrected "
                         "over the task's pairs of arms) below which an arm is stopped as worse than the leader")
    seeds_per_round: int = Field(default=1, ge=1, description="seeds added to each racing arm per round")
    max_jobs: int | None = Field(default=None, ge=1, description="total jobs the race may run (its budget); a round "
                                 "that would pass it is not started")

    @model_validator(mode="after")
    def _min_within_max(self) -> RaceConfig:
        if self.max_seeds is not None and self.min_seeds > self.max_seeds:
            raise ValueError(f"min_seeds ({self.min_seeds}) is larger than max_seeds ({self.max_seeds}): "
                             "lower min_seeds or raise max_seeds")
        return self

    def seeds_of(self, seeds: list[int]) -> list[int]:
        """The seeds the race may run, in the order it adds them: the config's, up to ``max_seeds``."""
        return list(seeds[: self.max_seeds or len(seeds)])


def check_race_seeds(race: RaceConfig, seeds: list[int]) -> None:
    """ValueError (a config error naming ``race``) when the config lists fewer seeds than the race needs."""
    if race.max_seeds is not None and race.max_seeds > len(seeds):
        raise ValueError(f"race.max_seeds is {race.max_seeds} but seeds lists {len(seeds)}: list at least "
                         f"{race.max_seeds} seeds (seeds: [1, 2, ..., {race.max_seeds}]) or lower race.max_seeds")
    if race.min_seeds > len(seeds):
        raise ValueError(f"race.min_seeds is {race.min_seeds} but seeds lists {len(seeds)}: list at least "
                         f"{race.min_seeds} seeds or lower race.min_seeds")

"""``meta/race.json``: the rounds of a raced run (the config's ``race:`` block), each as it was decided.

A raced run adds seeds in rounds (``trace_bench.runner.race``).  The record is rewritten atomically
after each decision, together with the round it starts, so it holds: every round's seeds and the
arms that ran them (their job ids), and for each decided round, per task, what the verdict's paired
test said of every racing arm against the task's leader (``RaceDecision``: the arm continues, is
eliminated with its Holm-corrected p-value, or is the leader).  With the jobs' records it is the
source of truth of the race: ``--resume`` runs what its last round lacks, then decides as an
uninterrupted race would have.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from trace_bench.store.models._base import StoreModel

RaceOutcome = Literal["leader", "continues", "eliminated", "finished"]
RaceEnd = Literal["", "decided", "max_seeds", "max_jobs"]


class RaceArm(BaseModel):
    """One arm of one task, named as every table names it (``Arm``: task label, trainer, params label)."""

    model_config = ConfigDict(extra="allow", frozen=True, defer_build=True)

    task: str
    trainer: str
    params_label: str
    label: str = Field(description="the arm's name across tasks (trainer, and its variant unless default)")


class RaceDecision(BaseModel):
    """What the test said of one racing arm of a task after a round."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    arm: RaceArm
    outcome: RaceOutcome = Field(description="leader: the verdict's best arm of the task; continues: the "
                                 "test cannot separate it from the leader; eliminated: the test finds it worse "
                                 "(no more seeds); finished: its task's race ended (decided or out of seeds)")
    seeds: int = Field(description="scored seeds the arm had when decided")
    mean: float | None = Field(default=None, description="its mean on the verdict's metric over those seeds")
    metric: str = ""
    p_vs_leader: float | None = Field(default=None, description="Holm-corrected p-value of the paired test "
                                      "against the leader (over the task's pairs of arms)")
    reason: str = ""


class RaceRound(BaseModel):
    """One round: the seeds it added to the arms that ran them; once its jobs ended, the decisions."""

    model_config = ConfigDict(extra="allow", defer_build=True)

    index: int
    seeds: list[int]
    arms: list[RaceArm]
    jobs: list[str] = Field(default_factory=list, description="the round's job ids (the arms' jobs of its seeds)")
    decided: bool = False
    decided_at: str = ""
    decisions: list[RaceDecision] = Field(default_factory=list)


class RaceRecord(StoreModel):
    """The race of a run: its settings, the seeds it may run, its rounds, and how it ended."""

    model_config = ConfigDict(defer_build=True)

    SCHEMA_VERSION: ClassVar[int] = 1
    FILE: ClassVar[str] = "meta/race.json"

    min_seeds: int
    max_seeds: int
    alpha: float
    seeds_per_round: int = 1
    max_jobs: int | None = None
    seeds: list[int] = Field(description="the seeds the race may run, in the order it adds them")
    full_jobs: int = Field(default=0, description="jobs the full matrix (every arm, every seed) would run")
    test: str = Field(default="", description="the verdict's test and correction the decisions used")
    rounds: list[RaceRound] = Field(default_factory=list)
    ended: RaceEnd = Field(default="", description="decided: every task has one racing arm left; max_seeds: the "
                           "racing arms ran every seed; max_jobs: the next round would pass race.max_jobs")
    ended_at: str = ""

    @property
    def job_ids(self) -> list[str]:
        """Every job the race planned so far, in round order."""
        return [job_id for round_ in self.rounds for job_id in round_.jobs]

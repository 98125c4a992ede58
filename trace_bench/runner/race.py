"""Racing of seeds: rounds of the run's own plan (F-Race, Birattari et al. 2002; irace, López-Ibáñez et al. 2016).

A run with a ``race:`` block expands the full matrix as any run does, then plans only part of it:
round 0 is every arm (trainer x params variant, per task) on the first ``min_seeds`` of the config's
seeds.  When a round's jobs have ended, each task's racing arms are judged by the run's own verdict
as it would read if the run stopped there (:func:`trace_bench.store.leaderboard.leaderboard_rows` over
every arm of the task, those stopped earlier on the seeds they ran: the metric the leaderboard ranks
on, the paired t-test over seeds, Holm over the task's pairs of arms, at ``race.alpha``): the leader
is the verdict's best arm, a racing arm the verdict puts *below* it is eliminated, and the others
continue.  So an arm is stopped only when the report would call it worse than the best.  The next round adds the next ``seeds_per_round`` seeds to the continuing arms of the tasks
still undecided.  A task is decided when its leader alone is left; the race ends when every task is
decided, when the racing arms ran ``max_seeds`` seeds, or when the next round would pass
``max_jobs``.

Every job of a round is a job of the full matrix (same id, same specification), so a raced run's
results for the seeds it ran are the full run's.  The rounds are written to ``meta/race.json``
(:class:`~trace_bench.store.models.RaceRecord`) atomically, each decision together with the round it
starts; with the jobs' records it is the race's source of truth, so ``--resume`` after a kill at
any instant runs what the last round lacks and then decides as the uninterrupted race would have.

The decisions are repeated tests on growing samples, as in F-Race: an arm's chance of being stopped
wrongly is larger than ``alpha`` over a whole race.  The report's verdict is computed afresh at the
end from every job that ran.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from trace_bench._util.errors import ConfigError
from trace_bench.config.models import RunConfig
from trace_bench.config.race import RaceConfig
from trace_bench.store.events import utc_now
from trace_bench.store.leaderboard import ArmJob, leaderboard_rows
from trace_bench.store.models import Arm, JobResult, JobSpec, RaceArm, RaceDecision, RaceRecord, RaceRound
from trace_bench.store.models.leaderboard import LeaderboardRow
from trace_bench.store.models.race import RaceEnd, RaceOutcome
from trace_bench.store.paired import CORRECTION, TEST_NAME
from trace_bench.store.results_index import LazyResult, loaded
from trace_bench.store.run_store import RunStore

Records = Mapping[str, JobResult | LazyResult]


def race_arm(arm: Arm) -> RaceArm:
    return RaceArm(task=arm.task, trainer=arm.trainer, params_label=arm.params_label, label=arm.label)


def arm_of(race_arm_: RaceArm) -> Arm:
    return Arm(race_arm_.task, race_arm_.trainer, race_arm_.params_label)


@dataclass
class Race:
    """The race of one run: the full matrix's cells by (arm, seed), and its record."""

    settings: RaceConfig
    store: RunStore
    record: RaceRecord
    cells: dict[tuple[Arm, int], JobSpec]
    arms: list[Arm]  # in matrix order

    @classmethod
    def open(cls, config: RunConfig, jobs: list[JobSpec], store: RunStore, *, fresh: bool) -> Race:
        """The run's race: its record read back (a resume), or round 0 planned and written (a new
        race, or ``fresh``: ``--force``/``resume: none`` starts the race over).  ConfigError (exit 2)
        when the record does not belong to this matrix, or when round 0 alone passes ``max_jobs``."""
        assert config.race is not None
        settings = config.race
        seeds = settings.seeds_of(config.seeds)
        cells = {(spec.arm, spec.seed): spec for spec in jobs if spec.seed in seeds}
        arms = list(dict.fromkeys(spec.arm for spec in jobs))
        record = None if fresh else store.read_race()
        race = cls(settings, store, record or cls._new_record(settings, seeds, len(cells)), cells, arms)
        if record is None:
            check_first_round(config, jobs)
            race._start_round(seeds[: settings.min_seeds], arms)
            store.write_race(race.record)
        else:
            race._check_matches(seeds)
        return race

    @staticmethod
    def _new_record(settings: RaceConfig, seeds: list[int], full_jobs: int) -> RaceRecord:
        return RaceRecord(min_seeds=settings.min_seeds, max_seeds=len(seeds), alpha=settings.alpha,
                          seeds_per_round=settings.seeds_per_round, max_jobs=settings.max_jobs, seeds=seeds,
                          full_jobs=full_jobs, test=f"{TEST_NAME} over seeds on the leaderboard's "
                          f"metric, {CORRECTION} (every arm, on the seeds it ran)")

    def _check_matches(self, seeds: list[int]) -> None:
        known = {spec.job_id for spec in self.cells.values()}
        missing = [job_id for job_id in self.record.job_ids if job_id not in known]
        started = {arm_of(a) for a in self.record.rounds[0].arms} if self.record.rounds else set()
        if self.record.seeds != seeds or missing or started != set(self.arms):
            raise ConfigError("the run's race (meta/race.json) was run on other seeds or another matrix than this "
                              "config's", key_path="race", hint="resume a raced run with its own config; a raced "
                              "run cannot be extended: start a new run")

    @property
    def ended(self) -> bool:
        return bool(self.record.ended)

    def round_complete(self, records: Records) -> bool:
        """Whether every job of the open round has a record (what a decision needs)."""
        return self.ended or all(job_id in records for job_id in self.record.rounds[-1].jobs)

    def jobs(self) -> list[JobSpec]:
        """Every job the race planned so far, in matrix order."""
        planned = set(self.record.job_ids)
        return sorted((spec for spec in self.cells.values() if spec.job_id in planned), key=lambda s: s.index)

    def _start_round(self, seeds: list[int], arms: list[Arm]) -> None:
        jobs = [self.cells[(arm, seed)].job_id for arm in arms for seed in seeds if (arm, seed) in self.cells]
        self.record.rounds.append(RaceRound(index=len(self.record.rounds), seeds=seeds,
                                            arms=[race_arm(arm) for arm in arms], jobs=jobs))

    def advance(self, records: Records) -> list[JobSpec]:
        """Decide the open round from the jobs' ``records`` and plan the next; the next round's jobs
        ([] when the race ended).  The decision and the round it starts are written in one atomic
        replacement of ``meta/race.json``."""
        if self.ended:
            return []
        current = self.record.rounds[-1]
        decisions = decide_round(current, self.record.rounds, self.cells, records, self.settings.alpha)
        current.decided, current.decided_at, current.decisions = True, utc_now(), decisions
        given = [seed for round_ in self.record.rounds for seed in round_.seeds]
        left = [seed for seed in self.record.seeds if seed not in given]
        racing = _racing_arms(decisions)
        if not racing or not left:
            self._end("decided" if all(d.outcome == "leader" for d in decisions if d.outcome != "eliminated")
                      else "max_seeds", decisions)
        else:
            before = len(self.record.job_ids)
            self._start_round(left[: self.settings.seeds_per_round], racing)
            if self.settings.max_jobs is not None and len(self.record.job_ids) > self.settings.max_jobs:
                self.record.rounds.pop()
                self._end("max_jobs", decisions)
            else:
                assert len(self.record.job_ids) > before
        self.store.write_race(self.record)
        return [] if self.ended else [self.cells[(arm_of(a), seed)] for a in self.record.rounds[-1].arms
                                      for seed in self.record.rounds[-1].seeds
                                      if (arm_of(a), seed) in self.cells]

    def _end(self, how: RaceEnd, decisions: list[RaceDecision]) -> None:
        for decision in decisions:
            if decision.outcome == "continues":
                decision.outcome = "finished"
        self.record.ended = how
        self.record.ended_at = utc_now()

    def summary(self) -> str:
        """One line on the console: the round just decided."""
        last = next((r for r in reversed(self.record.rounds) if r.decided), None)
        if last is None:
            return ""
        out = [d for d in last.decisions if d.outcome == "eliminated"]
        text = f"race round {last.index} (seeds {', '.join(map(str, last.seeds))}): {len(out)} arm(s) eliminated"
        if self.ended:
            return f"{text}; race ended ({self.record.ended}): {len(self.record.job_ids)} of " \
                   f"{self.record.full_jobs} jobs run"
        return f"{text}; {len(self.record.rounds[-1].arms)} arm(s) race on"


def check_first_round(config: RunConfig, jobs: list[JobSpec]) -> None:
    """ConfigError (exit 2) when round 0 alone (every arm on ``min_seeds`` seeds) passes ``race.max_jobs``:
    checked when the matrix is expanded, before anything is written."""
    race = config.race
    if race is None or race.max_jobs is None:
        return
    first = set(race.seeds_of(config.seeds)[: race.min_seeds])
    count = sum(1 for spec in jobs if spec.seed in first)
    if count > race.max_jobs:
        arms = len({spec.arm for spec in jobs})
        raise ConfigError(f"race.max_jobs is {race.max_jobs} but the race's first round alone runs {count} jobs "
                          f"({arms} arms x {race.min_seeds} seeds)", key_path="race.max_jobs",
                          hint="raise race.max_jobs, or lower race.min_seeds")


def _racing_arms(decisions: list[RaceDecision]) -> list[Arm]:
    """The arms of the tasks still undecided (more than one arm left, or a lone arm that is not yet the
    verdict's best) that run the next round."""
    by_task: dict[str, list[RaceDecision]] = {}
    for decision in decisions:
        if decision.outcome != "eliminated":
            by_task.setdefault(decision.arm.task, []).append(decision)
    return [arm_of(d.arm) for task in by_task.values()
            if len(task) > 1 or all(d.outcome != "leader" for d in task) for d in task]


def decide_round(current: RaceRound, rounds: list[RaceRound], cells: Mapping[tuple[Arm, int], JobSpec],
                 records: Records, alpha: float) -> list[RaceDecision]:
    """Per task, each arm of ``current`` against the task's leader: the leaderboard's own verdict as
    it stands after the round, over every arm of the task (those eliminated earlier too, on the seeds
    they ran: the verdict's Holm family is the task's every pair of arms) and every seed the race gave."""
    tasks = {racing.task for racing in current.arms}
    given: dict[Arm, list[int]] = {}
    for round_ in rounds[: current.index + 1]:
        for arm in (arm_of(a) for a in round_.arms if a.task in tasks):
            given.setdefault(arm, []).extend(round_.seeds)
    members: dict[Arm, list[ArmJob]] = {}
    planned: dict[Arm, int] = {}
    for arm, seeds in given.items():
        specs = [cells[(arm, seed)] for seed in seeds if (arm, seed) in cells]
        members[arm] = [ArmJob.of(loaded(records[s.job_id])) for s in specs if s.job_id in records]
        planned[arm] = len(specs)
    rows = {(row.task, row.trainer, row.params_label): row for row in leaderboard_rows(members, planned, alpha=alpha)}
    racing_best = {r.task for r in current.arms if rows[(r.task, r.trainer, r.params_label)].vs_best == "best"}
    return [_decision(racing, rows[(racing.task, racing.trainer, racing.params_label)], alpha,
                      racing.task in racing_best) for racing in current.arms]


def _decision(racing: RaceArm, row: LeaderboardRow, alpha: float, leader_racing: bool) -> RaceDecision:
    """The verdict's word on one racing arm; while the task's best arm is one the race stopped earlier
    (its mean, over fewer seeds, is ahead), no racing arm is stopped: they need more seeds."""
    p_value = row.p_vs_best
    outcome: RaceOutcome
    if row.vs_best == "best":
        outcome, reason = "leader", "the best arm of the task's verdict"
    elif not leader_racing:
        outcome, reason = "continues", "the task's best mean is an arm stopped earlier, over fewer seeds"
    elif row.vs_best == "below":
        outcome = "eliminated"
        reason = f"worse than the leader: p = {p_value:.3g} < alpha {alpha:g} over {row.count} seeds"
    else:
        outcome = "continues"
        reason = ("no score to compare yet" if row.mean is None else
                  f"not separated from the leader (p = {p_value:.3g} over {row.count} seeds)" if p_value is not None
                  else f"not separated from the leader ({row.count} seeds)")
    return RaceDecision(arm=racing, outcome=outcome, seeds=row.count, mean=row.mean, metric=row.metric,
                        p_vs_leader=p_value, reason=reason)

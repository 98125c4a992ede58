"""The race's rounds in-process (``trace_bench.runner.race``), on records whose scores the test sets: who
is stopped and with what p-value, what the next round runs, that a round is never decided on missing
jobs, that a reopened race is the one on disk, and how a race ends (decided, out of seeds, out of jobs)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest
from scipy.stats import ttest_rel

from trace_bench._util.errors import ConfigError
from trace_bench.config.models import RunConfig, parse_config
from trace_bench.matrix.expand import expand_matrix
from trace_bench.registry.tasks import TaskCatalog
from trace_bench.runner.race import Race
from trace_bench.store.models import JobResult, JobSpec, Resolution
from trace_bench.store.run_store import RunStore

#: per arm (trainer), its score on seed s: a clearly better, a close and a clearly worse arm
SCORES = {"PrioritySearch": lambda s: 0.90 + 0.01 * (s % 3), "BasicSearchAlgorithm": lambda s: 0.90 + 0.01 * (s % 2),
          "NoOpTrainer": lambda s: 0.10 + 0.02 * (s % 2)}


def _config(**race: Any) -> RunConfig:
    return parse_config({"tasks": ["internal:numeric_param"], "seeds": [1, 2, 3, 4, 5, 6],
                         "trainers": [{"id": "PrioritySearch", "ps_steps": 2}, {"id": "BasicSearchAlgorithm",
                                                                              "num_steps": 2}, "NoOpTrainer"],
                         "race": {"min_seeds": 2, **race}})


@pytest.fixture(scope="module")
def jobs() -> list[JobSpec]:
    return expand_matrix(_config(), TaskCatalog.create(None))


def _records(specs: list[JobSpec], scores: dict[str, Any] = SCORES) -> dict[str, JobResult]:
    return {spec.job_id: JobResult(run_id="r", spec=spec, status="ok", resolved=Resolution.planned(spec),
                                   score_best=scores[spec.trainer](spec.seed)) for spec in specs}


def _holm_vs_leader(leader: str, arm: str, seeds: tuple[int, ...]) -> float:
    """scipy's paired t-test of every pair of the three arms, Holm-adjusted (step-down, by hand): the pair's."""
    pairs = [tuple(sorted(p)) for p in itertools.combinations(SCORES, 2)]
    raw = {p: ttest_rel([SCORES[p[0]](s) for s in seeds], [SCORES[p[1]](s) for s in seeds]).pvalue for p in pairs}
    adjusted, running = {}, 0.0
    for rank, pair in enumerate(sorted(pairs, key=raw.__getitem__)):
        running = max(running, min(1.0, (len(pairs) - rank) * raw[pair]))
        adjusted[pair] = running
    return adjusted[tuple(sorted((leader, arm)))]


def _store(tmp_path: Path) -> RunStore:
    return RunStore.create(tmp_path, "r")


def test_worse_arm_stopped_with_the_verdicts_p_value(tmp_path: Path, jobs: list[JobSpec]) -> None:
    race = Race.open(_config(), jobs, _store(tmp_path), fresh=False)
    first = race.jobs()
    assert sorted((j.trainer, j.seed) for j in first) == sorted((t, s) for t in SCORES for s in (1, 2))
    assert not race.round_complete(_records(first[:-1]))  # a job without a record: no decision
    second = race.advance(_records(first))
    decisions = {d.arm.trainer: d for d in race.record.rounds[0].decisions}
    assert decisions["PrioritySearch"].outcome == "leader" and decisions["NoOpTrainer"].outcome == "eliminated"
    assert decisions["BasicSearchAlgorithm"].outcome == "continues"
    assert decisions["NoOpTrainer"].p_vs_leader == pytest.approx(_holm_vs_leader("PrioritySearch", "NoOpTrainer", (1, 2)))
    assert sorted((j.trainer, j.seed) for j in second) == [("BasicSearchAlgorithm", 3), ("PrioritySearch", 3)]
    # reopened (a resume), the race is the one on disk: the same rounds, the same planned jobs
    again = Race.open(_config(), jobs, RunStore(race.store.root), fresh=False)
    assert again.record == race.record and again.jobs() == race.jobs()


def test_race_runs_out_of_seeds_with_close_arms_finished(tmp_path: Path, jobs: list[JobSpec]) -> None:
    race = Race.open(_config(), jobs, _store(tmp_path), fresh=False)
    while planned := race.jobs():
        if not race.advance(_records(planned)):
            break
    assert race.record.ended == "max_seeds" and [r.seeds for r in race.record.rounds] == [[1, 2], [3], [4], [5], [6]]
    last = {d.arm.trainer: d.outcome for d in race.record.rounds[-1].decisions}
    assert last == {"PrioritySearch": "leader", "BasicSearchAlgorithm": "finished"}
    assert len(race.record.job_ids) == 6 + 4 * 2 < race.record.full_jobs == 18


def test_race_decided_when_the_leader_is_alone(tmp_path: Path, jobs: list[JobSpec]) -> None:
    worse = {**SCORES, "BasicSearchAlgorithm": lambda s: 0.5 + 0.01 * (s % 2)}
    race = Race.open(_config(), jobs, _store(tmp_path), fresh=False)
    assert race.advance(_records(race.jobs(), worse)) == []
    assert race.record.ended == "decided" and len(race.record.job_ids) == 6


def test_race_stops_before_a_round_past_max_jobs(tmp_path: Path, jobs: list[JobSpec]) -> None:
    race = Race.open(_config(max_jobs=7), jobs, _store(tmp_path), fresh=False)
    assert race.advance(_records(race.jobs())) == []
    assert race.record.ended == "max_jobs" and len(race.record.rounds) == 1


def test_a_race_is_resumed_only_with_its_own_seeds(tmp_path: Path, jobs: list[JobSpec]) -> None:
    store = _store(tmp_path)
    Race.open(_config(), jobs, store, fresh=False)
    other = _config().model_copy(update={"seeds": [9, 1, 2, 3, 4, 5]})
    with pytest.raises(ConfigError, match="other seeds or another matrix"):
        Race.open(other, jobs, store, fresh=False)

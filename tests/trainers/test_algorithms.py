"""Details of the algorithms that the end-to-end runs cannot see: ties, budgets, memory, Pareto order."""

from __future__ import annotations

import json
import random
from pathlib import Path
from types import SimpleNamespace

from trace_bench.testing.trainer_contract import run_trainer
from trace_bench.trainers.objectives import ObjectiveConfig
from trace_bench.trainers.opto_search import selection
from trace_bench.trainers.opto_search.beam import BeamsearchHistoryAlgorithm, BeamsearchHistoryParams
from trace_bench.trainers.opto_search.candidates import Candidate
from trace_bench.trainers.opto_search.gepa import (
    GEPAUCB,
    GEPABase,
    GEPABaseParams,
    GEPACandidate,
    GEPAUCBParams,
)
from trace_bench.trainers.opto_search.memory import HeapMemory, pop_best
from trace_bench.trainers.opto_search.streaming import StreamingPrioritySearch, StreamingPrioritySearchParams

PARETO = ObjectiveConfig(mode="pareto", minimize=frozenset({"loss"}))


def _ctx(objective: ObjectiveConfig | None = None) -> SimpleNamespace:
    return SimpleNamespace(objective=objective, rng=random.Random(0), parameters=[])


def test_pareto_rank_puts_front_first_and_breaks_ties_by_weighted_sum() -> None:
    points = [{"acc": 0.5, "loss": 0.5}, {"acc": 0.9, "loss": 0.9}, {"acc": 0.4, "loss": 0.6},
              {"acc": 0.6, "loss": 0.4}]
    ranked = selection.rank(list(range(4)), lambda i: (0.0, points[i]), PARETO)
    assert set(ranked[:3]) == {0, 1, 3} and ranked[3] == 2  # 2 is dominated by 0
    assert ranked[0] == 3  # highest acc - loss on the front


def test_scalar_rank_is_stable_for_ties() -> None:
    assert selection.rank(["a", "b", "c"], lambda s: (1.0 if s != "c" else 2.0, {}), None) == ["c", "a", "b"]


def test_softmax_sample_prefers_unevaluated_and_never_repeats() -> None:
    rng = random.Random(1)
    picks = selection.softmax_sample(rng, [0.0, float("inf"), -1.0, float("inf")], k=3)
    assert set(picks[:2]) == {1, 3} and len(set(picks)) == 3
    assert selection.softmax_sample(random.Random(2), [0.0, 100.0], k=1, temperature=1.0) == [1]


def test_heap_memory_ties_go_to_newer_and_truncation_keeps_a_heap_prefix() -> None:
    memory = HeapMemory(size=2)
    old, new, low = Candidate([1]), Candidate([2]), Candidate([3])
    for candidate, priority in ((old, 1.0), (new, 1.0), (low, 0.0)):
        memory.push(candidate, priority)
    memory.truncate()
    assert len(memory) == 2 and low not in list(memory)
    assert pop_best([memory], None) is new


def test_pareto_memory_pops_from_the_front() -> None:
    memory = HeapMemory()
    dominated = Candidate([1], scores=[1.0], score_dicts=[{"acc": 0.1, "loss": 0.9}])
    front = Candidate([2], scores=[0.0], score_dicts=[{"acc": 0.9, "loss": 0.1}])
    memory.push(dominated, 5.0)  # higher priority, but dominated
    memory.push(front, 1.0)
    assert pop_best([memory], PARETO) is front


def test_gepa_wins_ties_go_to_the_earlier_candidate() -> None:
    gepa = GEPABase(_ctx(), GEPABaseParams())
    gepa.pareto_inputs = [0, 1, 2]
    first = GEPACandidate([0], [1.0, 0.0, 0.5], [], 0)
    second = GEPACandidate([1], [1.0, 1.0, 0.2], [], 1)
    third = GEPACandidate([2], [0.0, 0.0, 0.0], [], 2)
    gepa.buffer = [first, second, third]
    gepa.update_wins()
    assert (first.wins, second.wins, third.wins) == (2, 1, 0)
    gepa.rng = random.Random(3)
    parents = [gepa.select_parent().id for _ in range(600)]
    assert parents.count(2) > 100  # max(1, wins) keeps a weight of 1 for a candidate without wins


def test_gepa_capacity_rules_differ_by_variant() -> None:
    def filled(gepa: GEPABase) -> GEPABase:
        gepa.pareto_inputs = [0]
        for i in range(18):
            gepa.buffer.append(GEPACandidate([i], [float(i % 5)], [], i))
        gepa.update_wins()
        gepa.enforce_capacity()
        return gepa

    assert len(filled(GEPABase(_ctx(), GEPABaseParams())).buffer) == 16
    ucb = filled(GEPAUCB(_ctx(), GEPAUCBParams(max_buffer_size=10)))
    assert len(ucb.buffer) == 10
    assert [c.id for c in ucb.buffer] == [2, 3, 4, 7, 8, 9, 12, 13, 14, 17]  # order kept, worst evicted


def test_streaming_proposal_budget() -> None:
    params = StreamingPrioritySearchParams(num_candidates=10, num_proposals=1)
    trainer = StreamingPrioritySearch(_ctx(), params)
    for i in range(12):
        trainer.long_memory.push(Candidate([i], scores=[0.0]), 0.0)
    assert trainer.proposal_budget(n_pairs=20, n_explorers=10) == 5  # 10 x 0.5 / 1
    empty = StreamingPrioritySearch(_ctx(), StreamingPrioritySearchParams(num_candidates=10, num_proposals=2))
    assert empty.proposal_budget(n_pairs=20, n_explorers=1) == 5  # raised to refill memory, capped at 10 / 2


def test_beam_history_context_lists_previous_attempts() -> None:
    ctx = _ctx()
    ctx.parameters = [SimpleNamespace(py_name="x0")]
    trainer = BeamsearchHistoryAlgorithm(ctx, BeamsearchHistoryParams(max_history_size=2))
    assert trainer.history_context() == ""
    for value, score in ((1.0, -2.0), (2.0, -1.0), (3.0, 0.0)):
        trainer.remember([value], score)
    text = trainer.history_context()
    assert "x0=" in text and "'3.0'" in text and "'1.0'" not in text  # trimmed to the last 2


def _events(outcome) -> list[dict]:  # type: ignore[no-untyped-def]
    return [e for e in outcome.events() if e["type"] == "step"]


def test_priority_search_calls_per_iteration(tmp_path: Path) -> None:
    """First iteration: num_candidates seed explorers x num_batches x num_proposals optimizer calls."""
    params = {"ps_steps": 1, "ps_candidates": 3, "ps_proposals": 2}
    outcome = run_trainer("PrioritySearch", tmp_path, params=params)
    assert outcome.result.llm_calls == 3 * 1 * 2


def test_streaming_has_no_validation_pass_and_its_last_step_only_scores(tmp_path: Path) -> None:
    outcome = run_trainer("StreamingPrioritySearch", tmp_path,
                          params={"ps_steps": 2, "ps_candidates": 4, "ps_proposals": 1})
    first, last = _events(outcome)
    assert first["n_evals"] == 4  # only the explorers' training rollouts; proposals wait for the next batch
    assert first["llm_calls"] == 3  # K = 4 x 0.5 = 2, raised to 3 to refill an empty memory
    assert last["info"]["explorers"] == 4 and last["n_evals"] == 8  # the best and the 3 new, scored now
    assert last["info"]["proposals"] == 0 and outcome.result.llm_calls == 3  # none that nothing could score


def test_streaming_defaults_search_and_improve(tmp_path: Path) -> None:
    """With no knobs, on a one-example task whose stub proposals improve it, the search runs past
    the step that makes proposals and keeps a better state than the initial one."""
    outcome = run_trainer("StreamingPrioritySearch", tmp_path, params={})
    result = outcome.result
    assert result.status == "ok" and result.n_steps > 1
    assert result.llm_calls > 0 and result.score_best > result.score_initial


def test_minibatch_ensure_improvement_never_accepts_a_worse_state(tmp_path: Path) -> None:
    outcome = run_trainer("MinibatchAlgorithm", tmp_path, params={"num_steps": 8})
    scores = [float(row["score"]) for row in outcome.curve()]
    assert scores == sorted(scores)  # one example: the re-scored batch is the selection set
    accepted = [json.loads(line) for line in outcome.job.state_history_path.read_text().splitlines()]
    assert len([r for r in accepted if r["kind"] == "step"]) < 8  # rolled-back steps record no new state


def test_gepa_merges_on_schedule(tmp_path: Path) -> None:
    outcome = run_trainer("GEPA-Base", tmp_path, task="internal:multi_param",
                          params={"gepa_iters": 6, "gepa_merge_every": 3})
    merged = [e["info"]["merged"] for e in _events(outcome)]
    assert all(m is None for i, m in enumerate(merged, start=1) if i % 3)
    assert any(m is not None for i, m in enumerate(merged, start=1) if i % 3 == 0), merged

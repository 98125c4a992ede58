"""The Pareto rule of the cost–quality frontier and the choice of its cost axis (plain Python, used by
leaderboard.csv, the table, the report and the UI)."""

from __future__ import annotations

import math

import pytest

from trace_bench.store.frontier import cost_axis, dominates, on_frontier


def test_dominance_needs_no_worse_on_both_and_better_on_one() -> None:
    assert dominates((1.0, 0.5), (2.0, 0.5)) and dominates((1.0, 0.6), (1.0, 0.5))
    assert not dominates((1.0, 0.5), (1.0, 0.5)), "an equal point beats nothing"
    assert not dominates((1.0, 0.4), (2.0, 0.5)), "cheaper but worse: a trade-off"
    assert not dominates((1.0, 0.5 + 1e-12), (1.0, 0.5)), "scores within 1e-9 are equal"
    assert not dominates((1e-6 * (1 + 1e-12), 0.5), (1e-6, 0.5)) and not dominates((1e-6, 0.5), (1e-6 * (1 + 1e-12), 0.5)), \
        "costs equal to a relative 1e-9 (sums of float USD) are equal"


def test_frontier_of_hand_made_points() -> None:
    points = [(0.001, 0.3),   # cheapest: on
              (0.01, 0.6),    # on
              (0.02, 0.5),    # costs more than (0.01, 0.6) and scores less: off
              (0.05, 0.8),    # best score: on
              (0.01, 0.4),    # same cost as (0.01, 0.6), worse: off
              (0.01, 0.6),    # a twin of an on point: on (neither beats the other)
              (None, 0.9),    # no cost: off, and beats nothing
              (0.0, math.nan)]  # no score: off
    assert on_frontier(points) == [True, True, False, True, False, True, False, False]
    assert on_frontier([]) == []
    assert on_frontier([(5.0, -3.0)]) == [True], "a lone arm is its task's frontier"


def test_cost_axis_prefers_usd_then_tokens_then_calls() -> None:
    assert cost_axis([(3, 300, 0.01), (0, 0, 0.0)]) == "usd", "a job with no call costs 0 on every axis"
    assert cost_axis([(3, 300, 0.01), (2, 200, 0.0)]) == "tokens", "one arm's price unknown: USD would flatter it"
    assert cost_axis([(3, 300, 0.0), (2, 0, 0.0)]) == "llm_calls"
    assert cost_axis([(0, 0, 0.0)]) == "llm_calls" and cost_axis([]) == "llm_calls"


def test_an_incomplete_arm_is_never_on_the_frontier_and_pushes_no_complete_arm_off() -> None:
    """No survivorship: an arm with failed or missing seeds never outranks a complete one."""
    points = [(0.001, 0.3), (0.01, 0.6), (0.005, 0.9)]  # the third is cheaper and better than the second
    assert on_frontier(points) == [True, False, True], "taken at face value, the lucky arm beats the mid one"
    assert on_frontier(points, [True, True, False]) == [True, True, False]
    assert on_frontier([(1.0, 1.0)], [False]) == [False], "a lone incomplete arm: no frontier at all"
    with pytest.raises(ValueError):
        on_frontier(points, [True])

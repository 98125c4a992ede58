"""The built-in discovery problems: each scorer on a valid configuration and an invalid one (AlphaEvolve's
published constructions, from the best-known registry, are checked in test_best_known.py); the shipped
programs and stub candidates, evaluated through the guide (in the sandbox), improve without reaching the
best known value; listing imports nothing heavy."""

from __future__ import annotations

import itertools
import math
import subprocess
import sys

import numpy as np
import pytest

from trace_bench.tasks.discovery.catalog import BUILTIN
from trace_bench.tasks.discovery.problems import (
    autocorrelation,
    circle_packing,
    erdos_overlap,
    heilbronn,
    kissing,
)
from trace_bench.tasks.discovery.problems import min_max_distance as minmax
from trace_bench.tasks.discovery.problems.common import InvalidConstruction

MODULES = {"circle_packing": circle_packing, "heilbronn": heilbronn, "min_max_distance": minmax,
           "autocorrelation": autocorrelation, "erdos_overlap": erdos_overlap, "kissing": kissing}


def _score(name: str, data: object) -> dict:
    problem = BUILTIN[name]
    return MODULES[problem.module].score(data, **problem.score_settings())


def test_the_suite_has_at_least_eight_problems_with_references() -> None:
    assert len(BUILTIN) >= 8
    for problem in BUILTIN.values():
        assert problem.direction in ("max", "min") and problem.best_known > 0 and problem.source


def test_circle_packing_valid_and_invalid() -> None:
    grid = [[0.25, 0.25, 0.25], [0.75, 0.25, 0.25], [0.25, 0.75, 0.25], [0.75, 0.75, 0.25]]
    assert circle_packing.score(grid, 4, best_known=2.0)["value"] == pytest.approx(1.0)
    with pytest.raises(InvalidConstruction, match="overlap"):
        circle_packing.check([[0.3, 0.3, 0.2], [0.5, 0.3, 0.2]], 2)
    with pytest.raises(InvalidConstruction, match="leaves the unit square"):
        circle_packing.check([[0.1, 0.5, 0.2]], 1)
    with pytest.raises(InvalidConstruction, match="shape"):
        _score("circle_packing_26", grid)
    with pytest.raises(InvalidConstruction, match="NaN"):
        circle_packing.check([[math.nan, 0.5, 0.1]], 1)


def test_heilbronn_valid_and_invalid() -> None:
    corners = [[0.0, 0.0], [1.0, 0.0], [0.5, math.sqrt(3) / 2]]
    assert heilbronn.score(corners, 3, "triangle", best_known=1.0)["value"] == pytest.approx(1.0)
    with pytest.raises(InvalidConstruction, match="outside the triangle"):
        heilbronn.check([[0.0, 0.0], [1.0, 0.0], [0.9, 0.9]], 3, "triangle")
    square = [[0, 0], [1, 0], [0, 1], [1, 1]]
    assert heilbronn.score(square, 4, "convex", best_known=1.0)["value"] == pytest.approx(0.5)


def test_collinear_points_are_invalid_for_the_convex_region() -> None:
    with pytest.raises(InvalidConstruction, match="collinear"):
        _score("heilbronn_convex_13", [[float(i), 0.0] for i in range(13)])


def test_min_max_distance_valid_and_invalid() -> None:
    square = [[0, 0], [1, 0], [0, 1], [1, 1]]
    assert minmax.score(square, 4, 2, best_known=2.0)["value"] == pytest.approx(2.0)
    with pytest.raises(InvalidConstruction, match="coincide"):
        minmax.score([[0, 0], [0, 0], [1, 1]], 3, 2, best_known=2.0)


def test_autocorrelation_and_erdos_valid_and_invalid() -> None:
    assert _score("first_autocorrelation", [1.0] * 10)["value"] == pytest.approx(2.0)
    assert _score("second_autocorrelation", [1.0] * 10)["value"] == pytest.approx(2 / 3, rel=0.02)
    with pytest.raises(InvalidConstruction, match="negative"):
        _score("first_autocorrelation", [1.0, -0.5, 1.0])
    assert _score("erdos_min_overlap", [1.0] * 5 + [0.0] * 5)["value"] == pytest.approx(1.0)
    with pytest.raises(InvalidConstruction, match="sum to"):
        _score("erdos_min_overlap", [1.0] * 6 + [0.0] * 4)
    with pytest.raises(InvalidConstruction, match=r"\[0, 1\]"):
        _score("erdos_min_overlap", [1.5, -0.5] * 5)


def test_kissing_is_checked_in_exact_arithmetic() -> None:
    roots = [[s1 if k == i else s2 if k == j else 0 for k in range(11)]
             for i, j in itertools.combinations(range(11), 2) for s1 in (1, -1) for s2 in (1, -1)]
    assert _score("kissing_11", np.array(roots))["value"] == 220
    with pytest.raises(InvalidConstruction, match="closer"):
        _score("kissing_11", np.array(roots + [[1] + [0] * 10]))  # a shorter vector among the roots: too close
    with pytest.raises(InvalidConstruction, match="origin"):
        _score("kissing_11", np.zeros((2, 11), dtype=int))
    with pytest.raises(InvalidConstruction, match="integers"):
        _score("kissing_11", np.eye(11) * 0.5)


@pytest.mark.parametrize("name", sorted(BUILTIN))
def test_program_and_stub_candidates_improve_below_the_best_known(name: str) -> None:
    """Through the real guide: the candidates run in the sandbox, the split scorer outside it."""
    from trace_bench.registry.tasks import TaskCatalog
    from trace_bench.tasks.problem import Problem

    problem = Problem.from_mapping(TaskCatalog.create().build(f"discovery:{name}", {}), f"discovery:{name}")
    guide = problem.guide
    initial = guide.evaluate(problem.param.data)
    assert initial.ok, initial.feedback
    stubs = [guide.evaluate(candidate) for candidate in problem.stub_candidates]
    assert stubs and all(s.ok for s in stubs), [s.feedback for s in stubs]
    assert max(s.score for s in stubs) > initial.score
    assert all(s.score < 1.0 for s in [initial, *stubs])  # 1.0 = the best known value
    fields = guide.report_fields(problem.stub_candidates[-1])
    assert fields["score_trust"] == "trusted" and 0 < fields["pct_of_best_known"] < 100


def test_listing_imports_no_problem_module_numpy_or_opto() -> None:
    code = ("import sys\nfrom trace_bench.cli.main import main\n"
            "try:\n    main(['list-tasks', '--bench', 'discovery'])\nexcept SystemExit:\n    pass\n"
            "heavy = sorted(m for m in sys.modules if m.split('.')[0] in ('numpy', 'opto', 'yaml') "
            "or m.startswith('trace_bench.tasks.discovery.problems.') or m == 'trace_bench.tasks.discovery.task')\n"
            "assert not heavy, heavy\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr
    assert "discovery:circle_packing_26" in proc.stdout and "discovery:kissing_11" in proc.stdout


def test_scale_invariant_problems_are_scored_at_unit_scale() -> None:
    """Issue 40, finding 2: a 4 x 4 grid shrunk until its squared distances round read 10 instead of 18, and
    heights whose products underflow read 2,000 times better than the best known autocorrelation bound."""
    grid = np.array([[i, j] for i in range(4) for j in range(4)], dtype=float)
    steps = np.full(50, 1.57)
    steps[0] = 2.3
    convex = np.array(BUILTIN["heilbronn_convex_13"].record.alphaevolve.construction)
    expected = (_score("min_max_distance_16_2d", grid)["value"], _score("first_autocorrelation", steps)["value"],
                _score("heilbronn_convex_13", convex)["value"])
    assert expected[0] == pytest.approx(18.0)
    for scale in (1.5794011951465e-162, 1e-162, 3e150):
        assert _score("min_max_distance_16_2d", grid * scale)["value"] == pytest.approx(expected[0], rel=1e-12)
        assert _score("first_autocorrelation", steps * scale)["value"] == pytest.approx(expected[1], rel=1e-12)
        assert _score("heilbronn_convex_13", convex * scale)["value"] == pytest.approx(expected[2], rel=1e-9)


@pytest.mark.parametrize(("name", "construction"), [
    ("first_autocorrelation", [1.0, 5e-324, 1.0]),
    ("min_max_distance_16_2d", [[i * 1e-310, j * 1e-310] for i in range(4) for j in range(4)]),
    ("circle_packing_26", [[0.5, 0.5, 1e-320]] * 26),
])
def test_subnormal_numbers_are_refused(name: str, construction: object) -> None:
    with pytest.raises(InvalidConstruction, match="subnormal"):
        _score(name, construction)


def test_a_construction_above_the_best_known_value_is_checked_again_exactly() -> None:
    """Within the tolerance, the float sum of two circles beats 0.5; with the tolerance taken off every
    radius (a packing valid with none), it does not: the score says it does not beat 0.5."""
    overlapping = [[0.25, 0.5, 0.25 + 4e-13], [0.75, 0.5, 0.25 + 4e-13]]  # 8e-13 overlap: within 1e-12
    with pytest.raises(InvalidConstruction, match="leaves the unit square"):
        circle_packing.score(overlapping, 2, best_known=0.5)  # no tolerance unless the registry gives one
    result = circle_packing.score(overlapping, 2, best_known=0.5, tolerance=1e-12)
    assert result["float_value"] > 0.5 and result["beats_best_known"] == 0.0
    assert result["value"] < 0.5 and result["combined_score"] < 1.0 and "does not beat" in result["artifacts"]["summary"]
    honest = circle_packing.score([[0.25, 0.5, 0.25], [0.75, 0.5, 0.25]], 2, best_known=0.49, tolerance=1e-12)
    assert honest["beats_best_known"] == 1.0 and honest["combined_score"] == pytest.approx(0.5 / 0.49)
    outside = [[0.0, 0.0], [1.0, 0.0], [0.5, math.sqrt(3) / 2 + 5e-13]]  # above the apex, within the tolerance
    result = heilbronn.score(outside, 3, "triangle", best_known=0.99, tolerance=1e-12)
    assert result["beats_best_known"] == 1.0 and result["value"] < result["float_value"] < 1.0 + 1e-11
    assert _score("first_autocorrelation", [1.0] * 10)["value"] == pytest.approx(2.0)
    bounded = autocorrelation.score([1.0] * 10, "first", best_known=2.5, direction="min")
    assert 2.0 < bounded["value"] < 2.0 + 1e-12 and bounded["beats_best_known"] == 1.0

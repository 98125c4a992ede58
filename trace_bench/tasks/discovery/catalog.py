"""The built-in ``discovery:`` problems as static records: listing imports no problem module.

What each problem is (its module, settings and statement) is written here; its yardsticks (the best
value known today and AlphaEvolve's, with sources and dates), direction and verifier tolerance live
in the dated registry ``problems/best_known.json`` (:mod:`trace_bench.tasks.discovery.best_known`).
The statements are those of Appendix B of "AlphaEvolve: A coding agent for scientific and
algorithmic discovery" (Novikov et al., 2025) and its public results notebook.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from trace_bench.tasks.discovery.best_known import ProblemRecord, problem_record

_PROBLEMS = "trace_bench.tasks.discovery.problems"


@dataclass(frozen=True)
class BuiltinProblem:
    name: str
    module: str
    description: str
    scoring: str
    settings: dict[str, Any] = field(default_factory=dict)
    stubs: str = ""  # the key of the module's STUB_CANDIDATES mapping, when it is one
    #: why the problem declares no continuous form (problems/continuous.py) for classical solvers; "" when it does
    no_continuous_form: str = ""

    @property
    def parameter_kinds(self) -> tuple[str, ...]:
        """``code`` (the evolve block), and ``continuous`` when the problem has a continuous form."""
        return ("code",) if self.no_continuous_form else ("code", "continuous")

    @property
    def evaluator(self) -> str:
        return f"{_PROBLEMS}.{self.module}"

    @property
    def record(self) -> ProblemRecord:
        return problem_record(self.name)

    @property
    def best_known(self) -> float:
        return self.record.best_known.number

    @property
    def direction(self) -> str:
        return self.record.direction

    @property
    def source(self) -> str:
        return self.record.best_known.cited()

    def score_settings(self) -> dict[str, Any]:
        """What the problem's ``score()`` is called with: its settings, the best known value (the
        yardstick of ``combined_score``), the margin a construction must beat it by, the direction
        and the verifier's tolerance."""
        record = self.record
        return {**self.settings, "best_known": record.best_known.number, "margin": float(record.best_known.margin),
                "direction": record.direction, "tolerance": record.tolerance}


def _circles(n: int) -> BuiltinProblem:
    return BuiltinProblem(f"circle_packing_{n}", "circle_packing",
                          f"Pack {n} disjoint circles in the unit square, maximizing the sum of radii.",
                          "sum of radii", {"n": n})


BUILTIN: dict[str, BuiltinProblem] = {p.name: p for p in (
    _circles(26),
    _circles(32),
    BuiltinProblem("heilbronn_triangle_11", "heilbronn",
                   "11 points in a unit-area triangle maximizing the smallest triangle they form.",
                   "smallest triangle area / triangle area", {"n": 11, "region": "triangle"}, stubs="triangle"),
    BuiltinProblem("heilbronn_convex_13", "heilbronn",
                   "13 points maximizing the smallest triangle relative to their convex hull's area.",
                   "smallest triangle area / convex hull area", {"n": 13, "region": "convex"}, stubs="convex",
                   no_continuous_form="its value divides by the area of the points' convex hull, which is not a "
                                      "smooth function of the points"),
    BuiltinProblem("min_max_distance_16_2d", "min_max_distance",
                   "16 points in the plane minimizing (max distance / min distance)^2.",
                   "(max / min pairwise distance)^2", {"n": 16, "d": 2}),
    BuiltinProblem("min_max_distance_14_3d", "min_max_distance",
                   "14 points in space minimizing (max distance / min distance)^2.",
                   "(max / min pairwise distance)^2", {"n": 14, "d": 3}),
    BuiltinProblem("first_autocorrelation", "autocorrelation",
                   "A non-negative step function whose autoconvolution peak bounds C1 from above.",
                   "2k max(h*h) / (sum h)^2", {"kind": "first"}, stubs="first"),
    BuiltinProblem("second_autocorrelation", "autocorrelation",
                   "A non-negative step function whose autoconvolution bounds C2 from below.",
                   "||g||_2^2 / (||g||_1 ||g||_inf), g = h*h", {"kind": "second"}, stubs="second"),
    BuiltinProblem("erdos_min_overlap", "erdos_overlap",
                   "A step function on [0, 2] whose largest overlap bounds Erdős' minimum overlap constant.",
                   "max over shifts of the overlap"),
    BuiltinProblem("kissing_11", "kissing",
                   "As many kissing spheres as possible in 11 dimensions (integer points, exact check).",
                   "number of spheres", {"d": 11},
                   no_continuous_form="its points have integer coordinates: there is no continuous form"),
)}

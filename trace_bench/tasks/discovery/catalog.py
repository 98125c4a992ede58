"""The built-in ``discovery:`` problems as static records: listing imports no problem module.

Best known values and their sources are those AlphaEvolve reports in Appendix B of "AlphaEvolve: A
coding agent for scientific and algorithmic discovery" (Novikov et al., 2025) and in its public
results notebook; ``direction`` says whether larger or smaller values are better.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

_PROBLEMS = "trace_bench.tasks.discovery.problems"
APPENDIX = "AlphaEvolve (Novikov et al., 2025), Appendix B"


@dataclass(frozen=True)
class BuiltinProblem:
    name: str
    module: str
    description: str
    scoring: str
    best_known: float
    direction: str  # "max" or "min"
    source: str
    settings: dict[str, Any] = field(default_factory=dict)
    stubs: str = ""  # the key of the module's STUB_CANDIDATES mapping, when it is one

    @property
    def evaluator(self) -> str:
        return f"{_PROBLEMS}.{self.module}"


def _circles(n: int, best: float, previous: float) -> BuiltinProblem:
    return BuiltinProblem(f"circle_packing_{n}", "circle_packing",
                          f"Pack {n} disjoint circles in the unit square, maximizing the sum of radii.",
                          "sum of radii", best, "max", f"{APPENDIX}.12 ({previous} before)", {"n": n})


BUILTIN: dict[str, BuiltinProblem] = {p.name: p for p in (
    _circles(26, 2.635, 2.634),
    _circles(32, 2.937, 2.936),
    BuiltinProblem("heilbronn_triangle_11", "heilbronn",
                   "11 points in a unit-area triangle maximizing the smallest triangle they form.",
                   "smallest triangle area / triangle area", 0.0365, "max", f"{APPENDIX}.9 (0.036 before)",
                   {"n": 11, "region": "triangle"}, stubs="triangle"),
    BuiltinProblem("heilbronn_convex_13", "heilbronn",
                   "13 points maximizing the smallest triangle relative to their convex hull's area.",
                   "smallest triangle area / convex hull area", 0.0309, "max", f"{APPENDIX}.10 (0.0306 before)",
                   {"n": 13, "region": "convex"}, stubs="convex"),
    BuiltinProblem("min_max_distance_16_2d", "min_max_distance",
                   "16 points in the plane minimizing (max distance / min distance)^2.",
                   "(max / min pairwise distance)^2", 12.889266112, "min", f"{APPENDIX}.8 (12.890 before)",
                   {"n": 16, "d": 2}),
    BuiltinProblem("min_max_distance_14_3d", "min_max_distance",
                   "14 points in space minimizing (max distance / min distance)^2.",
                   "(max / min pairwise distance)^2", 4.165849767, "min", f"{APPENDIX}.8 (4.168 before)",
                   {"n": 14, "d": 3}),
    BuiltinProblem("first_autocorrelation", "autocorrelation",
                   "A non-negative step function whose autoconvolution peak bounds C1 from above.",
                   "2k max(h*h) / (sum h)^2", 1.5053, "min", f"{APPENDIX}.1 (1.5098 before)",
                   {"kind": "first"}, stubs="first"),
    BuiltinProblem("second_autocorrelation", "autocorrelation",
                   "A non-negative step function whose autoconvolution bounds C2 from below.",
                   "||g||_2^2 / (||g||_1 ||g||_inf), g = h*h", 0.8962, "max", f"{APPENDIX}.2 (0.8892 before)",
                   {"kind": "second"}, stubs="second"),
    BuiltinProblem("erdos_min_overlap", "erdos_overlap",
                   "A step function on [0, 2] whose largest overlap bounds Erdős' minimum overlap constant.",
                   "max over shifts of the overlap", 0.380924, "min", f"{APPENDIX}.5 (0.380927 before)"),
    BuiltinProblem("kissing_11", "kissing",
                   "As many kissing spheres as possible in 11 dimensions (integer points, exact check).",
                   "number of spheres", 593, "max", f"{APPENDIX}.11 (592 before)", {"d": 11}),
)}

"""What a task says about its objectives: :class:`ObjectiveConfig` (``problem["objective_config"]``).

The original's ``opto.trainer.objectives.ObjectiveConfig`` shape: the mode (scalar, weighted or
Pareto), the weight of each metric of a score dict, which metrics are minimized, and how a Pareto
front is ordered (``tie_break``; ours adds ``closest_to_ideal``, the default).  It lives with
the tasks because a task builds it; trainers rank candidates with it through
:mod:`trace_bench.trainers.objectives`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

TIE_BREAKS = ("closest_to_ideal", "weighted", "lexicographic", "random_seeded")


@dataclass(frozen=True)
class ObjectiveConfig:
    mode: str = "scalar"
    weights: Mapping[str, float] = field(default_factory=dict)
    minimize: frozenset[str] = frozenset()
    missing_value: float = float("-inf")
    pareto_metrics: tuple[str, ...] | None = None
    tie_break: str = "closest_to_ideal"
    seed: int = 0
    score_key: str = "score"

    def __post_init__(self) -> None:
        if self.mode not in ("scalar", "weighted", "pareto"):
            raise ValueError(f"objective mode must be scalar, weighted or pareto, got {self.mode!r}")
        if self.tie_break not in TIE_BREAKS:
            raise ValueError(f"objective tie_break must be one of {', '.join(TIE_BREAKS)}, got {self.tie_break!r}")
        object.__setattr__(self, "minimize", frozenset(self.minimize))
        object.__setattr__(self, "weights", dict(self.weights))

    @classmethod
    def coerce(cls, value: Any) -> ObjectiveConfig | None:
        if value is None or isinstance(value, ObjectiveConfig):
            return value
        if isinstance(value, Mapping):
            known = {k: v for k, v in value.items() if k in cls.__dataclass_fields__}
            if "minimize" in known:
                known["minimize"] = frozenset(known["minimize"])
            if known.get("pareto_metrics") is not None:
                known["pareto_metrics"] = tuple(known["pareto_metrics"])
            return cls(**known)
        # an object from another library with the same attribute names
        fields = {k: getattr(value, k) for k in cls.__dataclass_fields__ if hasattr(value, k)}
        return cls.coerce(fields)

    @property
    def multi(self) -> bool:
        return self.mode in ("weighted", "pareto")

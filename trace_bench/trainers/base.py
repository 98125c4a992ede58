"""The trainer base class and its typed, validated knobs.

A trainer is an optimization algorithm.  Its knobs are a pydantic model (``Params``), so a
config with an unknown or mistyped knob fails validation with the list of allowed names, and
``knob_aliases`` maps the original Trace-Bench names (``ps_steps``, ``gepa_iters``, ``threads``)
for every member of a family, not only for one literal id.

``Trainer`` is generic over its knobs' type: ``class MySearch(Trainer[MySearchParams])`` types
``self.params`` as ``MySearchParams`` (and ``Params = MySearchParams`` names the model the runner
validates the config with).  A subclass with a richer model re-declares ``params: ItsParams``.

A built-in trainer's names and listing metadata (``id``, ``aliases``, ``family``, ``description``,
``source``, ``requires``, ``extra``, ``probe``) are written once, in its row of ``catalog.json``
beside this module, which ``list-trainers`` reads without importing any trainer; the class gets
them from that row when it is defined.  A plugin trainer declares them as class attributes.

Budgets bind: when a job has a budget, the knob that bounds a trainer's iterations
(``budget_knob``) is freed to :data:`UNBOUNDED_ITERATIONS` unless the config set it or one of the
knobs that also bound it (``budget_bounds``: PrioritySearch's ``num_epochs``), so the trainer runs
until the budget is spent (:meth:`Trainer.free_for_budget`, applied where the config is resolved,
so the job id says so).  ``budget_stop`` says in words how the trainer then stops.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from functools import cache
from pathlib import Path
from typing import Any, ClassVar, Generic, TypeVar

from pydantic import BaseModel, ConfigDict, Field

from trace_bench.store.models.budget_use import UNBOUNDED_ITERATIONS
from trace_bench.trainers.context import TrainerContext


class TrainerParams(BaseModel):
    """Knobs every trainer accepts."""

    model_config = ConfigDict(extra="forbid")

    num_threads: int = Field(default=1, ge=1, description="threads for rollouts within the job")
    verbose: bool = False


COMMON_ALIASES: dict[str, str] = {"threads": "num_threads"}
ParamsT = TypeVar("ParamsT", bound=TrainerParams)


@cache
def builtin_rows() -> dict[str, dict[str, Any]]:
    """The rows of ``catalog.json`` (the built-in trainers), by ``module:Class``."""
    rows = json.loads(Path(__file__).with_name("catalog.json").read_text(encoding="utf-8"))
    return {row["target"]: row for row in rows}


class Trainer(ABC, Generic[ParamsT]):
    """Base of every trainer. Subclasses set ``id`` (a built-in: its ``catalog.json`` row does),
    ``Params`` and implement :meth:`train`."""

    id: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()
    family: ClassVar[str] = ""
    description: ClassVar[str] = ""
    Params: ClassVar[type[TrainerParams]] = TrainerParams
    knob_aliases: ClassVar[dict[str, str]] = {}
    source: ClassVar[str] = "built-in"
    uses_optimizer: ClassVar[bool] = True
    requires: ClassVar[tuple[str, ...]] = ()
    extra: ClassVar[str | None] = None
    #: ``module:function`` answering why the trainer cannot run here (or None) beyond missing
    #: ``requires``; it runs when trainers are listed, so it must import nothing heavy.
    probe: ClassVar[str | None] = None
    #: for a trainer that cannot change every kind of task parameter: the kinds it can (``text``,
    #: ``numeric``, ``code``, as tasks declare theirs); a task with none of them is refused before
    #: the run (its jobs could only fail).  Empty: any kind.
    optimizes_only: ClassVar[tuple[str, ...]] = ()
    #: the knob that bounds its iterations, freed under a budget (None: nothing is freed)
    budget_knob: ClassVar[str | None] = None
    #: other knobs that bound the same iterations: when the config sets one, nothing is freed
    budget_bounds: ClassVar[tuple[str, ...]] = ()
    #: how the trainer stops under a budget, in words (``list-trainers --all``, docs/trainers.md)
    budget_stop: ClassVar[str] = ""

    params: ParamsT

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        row = builtin_rows().get(f"{cls.__module__}:{cls.__qualname__}")
        if row is not None:
            cls.id, cls.description = row["id"], row["description"]
            cls.aliases, cls.family = tuple(row.get("aliases", ())), row.get("family", "")
            cls.source, cls.requires = row.get("source", "built-in"), tuple(row.get("requires", ()))
            cls.extra, cls.probe = row.get("extra"), row.get("probe")
            cls.budget_knob, cls.budget_stop = row.get("budget_knob"), row.get("budget_stop", "")
            cls.budget_bounds = tuple(row.get("budget_bounds", ()))

    def __init__(self, context: TrainerContext, params: ParamsT) -> None:
        self.ctx = context
        self.params = params

    @classmethod
    def all_aliases(cls) -> dict[str, str]:
        return {**COMMON_ALIASES, **cls.knob_aliases}

    @classmethod
    def resolve_kwargs(cls, raw: dict[str, Any]) -> dict[str, Any]:
        """Apply knob aliases; the canonical name wins when both are given."""
        aliases = cls.all_aliases()
        resolved: dict[str, Any] = {}
        for key, value in raw.items():
            key = key.replace("-", "_")
            target = aliases.get(key, key)
            if target in resolved and key != target:
                continue
            resolved[target] = value
        return resolved

    @classmethod
    def free_for_budget(cls, kwargs: dict[str, Any]) -> dict[str, Any]:
        """``kwargs`` (the knobs the config set, aliases resolved) with the iteration knob freed,
        unless the config set it or another knob that bounds the same iterations."""
        knob = cls.budget_knob
        if knob is None or knob in kwargs or any(name in kwargs for name in cls.budget_bounds):
            return kwargs
        return {**kwargs, knob: UNBOUNDED_ITERATIONS}

    @classmethod
    def allowed_knobs(cls) -> list[str]:
        return sorted(set(cls.Params.model_fields) | set(cls.all_aliases()))

    @abstractmethod
    def train(self) -> None:
        """Run the algorithm; call ``self.ctx.report_step`` once per iteration."""

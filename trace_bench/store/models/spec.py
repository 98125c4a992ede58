"""The job's specification, frozen once by the matrix, and what the job resolved when it started.

:class:`JobSpec` is declared here and nowhere else.  The matrix builds one per cell; the manifest
entry, ``job_meta.json`` and the job's record (``results.json``) each *embed* it (a field holding
the same object), never a copy of its fields.  It is frozen (optuna's ``FrozenTrial``: a record
read from storage is never modified by later writes): the driver and the job process share it,
and a record built from it cannot drift from it.

:class:`Resolution` is what the job process resolved once it had built the task's problem (the
optimizer it really uses, its kwargs, the guide's class), under the original Trace-Bench's
``resolved_*`` names; before that (a pending job, or a job that failed before training) it is
:meth:`Resolution.planned`, what the specification alone says.

:class:`Arm` is the unit every table, test and chart compares (DESIGN §5), with its one label.

The specification is typed to its leaves: its ``llm`` and ``budget`` are the config's own frozen
blocks (:class:`~trace_bench.config.models.LLMConfig`, :class:`~trace_bench.config.models.BudgetConfig`)
and its ``llm_identity`` an :class:`~trace_bench.config.identity.LLMIdentity`, the objects the
matrix was expanded from; only ``eval_kwargs`` and the trainer's knobs are open mappings (each task
and trainer types its own).  The store's models import the config's for this (docs/architecture.md).
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple

from pydantic import BaseModel, ConfigDict, Field

from trace_bench.config.identity import LLMIdentity
from trace_bench.config.model_names import ROLES
from trace_bench.config.models import BudgetConfig, LLMConfig
from trace_bench.store.ranking import variant_of

#: the optimizer a job uses when its config names none
DEFAULT_OPTIMIZER = "OptoPrime"


class Arm(NamedTuple):
    """(task, trainer, params variant): what a leaderboard row, a curve and a paired test compare.
    ``task`` is the task as tables name it (``JobSpec.task_label``: each eval_kwargs variant of a
    task is its own task), so two different arms never share a row or a label."""

    task: str
    trainer: str
    params_label: str

    @property
    def label(self) -> str:
        """How an arm is named across tasks: the trainer, and its variant unless it is the default."""
        return arm_label(self.trainer, self.params_label)


#: the columns of a job table that name its arm
ARM_FIELDS: tuple[str, ...] = Arm._fields


def arm_label(trainer: str, params_label: str) -> str:
    """:attr:`Arm.label` from its parts (for frames that hold them as columns)."""
    return trainer if params_label in ("", "default") else f"{trainer} [{params_label}]"


class JobSpec(BaseModel):
    """One cell of the matrix: everything a job process needs, JSON-able, frozen.

    Fields marked ``column`` are results.csv columns (in this order, after ``run_id``), together
    with the derived columns of :meth:`columns`.
    """

    model_config = ConfigDict(frozen=True, extra="ignore")

    job_id: str = Field(json_schema_extra={"column": True})
    index: int = Field(default=0, description="position in the matrix")
    task: str = Field(json_schema_extra={"column": True})
    task_label: str = Field(default="", description="the task as tables name it: its id, or `id[k=v,...]` when the "
                            "run has it under several eval_kwargs, each variant its own task (empty in older files: "
                            "the id, or read from an `;eval:` params label)", json_schema_extra={"column": True})
    suite: str = Field(default="", json_schema_extra={"column": True})
    eval_kwargs: dict[str, Any] = Field(default_factory=dict)
    trainer: str = Field(json_schema_extra={"column": True})
    params: dict[str, Any] = Field(default_factory=dict, description="the variant as written",
                                   json_schema_extra={"column": True})
    params_label: str = Field(default="default", json_schema_extra={"column": True})
    trainer_kwargs: dict[str, Any] = Field(default_factory=dict, description="resolved, every default filled in")
    optimizer: str | None = Field(default=None, description="as the config named it (null: the default)")
    uses_optimizer: bool = Field(default=True, description="the trainer builds on an opto optimizer (false: an "
                                 "external library's own update rule, the baseline): without a named one, no "
                                 "optimizer rather than OptoPrime")
    optimizer_kwargs: dict[str, Any] = Field(default_factory=dict)
    seed: int = Field(json_schema_extra={"column": True})
    mode: str = Field(json_schema_extra={"column": True})
    llm: LLMConfig = Field(default_factory=LLMConfig, description="the config's llm block (key names, never keys)")
    llm_identity: LLMIdentity = Field(default_factory=LLMIdentity, description="what the job id hashes of the "
                                      "LLM settings: the mode, and in real mode the provider, models and "
                                      "temperatures")
    budget: BudgetConfig = Field(default_factory=BudgetConfig, description="the job's limits")
    logger: str | None = None
    task_root: str | None = None
    skip_reason: str | None = Field(default=None, description="why the task cannot run here (recorded as skipped)")
    sandbox: Literal["strong", "weak"] = Field(
        default="strong", description="weak: LLM-written code may run without bubblewrap where it is missing")

    @property
    def arm(self) -> Arm:
        task, params = variant_of(self.task, self.task_label, self.params_label)
        return Arm(task, self.trainer, params)

    @property
    def optimizer_name(self) -> str:
        """The optimizer the job is configured with: the one named, else the default (none for a
        trainer that uses no opto optimizer)."""
        return self.optimizer or (DEFAULT_OPTIMIZER if self.uses_optimizer else "")

    @property
    def role_models(self) -> dict[str, str]:
        """The model each role calls (:meth:`LLMIdentity.role_models`)."""
        return self.llm_identity.role_models(self.mode)

    @property
    def llm_model(self) -> str:
        """The config's model (the mode outside real mode)."""
        return self.llm_identity.model or self.mode

    def columns(self) -> dict[str, Any]:
        """The results.csv columns this specification fills (:data:`SPEC_VIEW_COLUMNS`), in order."""
        models = self.role_models
        return {name: models[name[6:]] if name in _MODEL_COLUMNS else getattr(self, _DERIVED.get(name, name))
                for name in SPEC_VIEW_COLUMNS}

    def endpoint(self) -> dict[str, str]:
        """``llm_provider`` (``stub`` in stub mode) and ``llm_base_url`` as the original named them."""
        return {"llm_provider": self.llm.provider or ("stub" if self.mode == "stub" else ""),
                "llm_base_url": self.llm.base_url or ""}


def _view_columns() -> tuple[str, ...]:
    """The ``column`` fields in declaration order, ``optimizer`` (the configured name) after
    ``trainer``, the config's model and each role's after ``mode``."""
    names: list[str] = []
    for name, info in JobSpec.model_fields.items():
        if isinstance(info.json_schema_extra, dict) and info.json_schema_extra.get("column"):
            names.append(name)
            if name == "trainer":
                names.append("optimizer")
            elif name == "mode":
                names += ["llm_model", *(f"model_{role}" for role in ROLES)]
    return tuple(names)


#: the results.csv columns a job's specification fills, in order (after ``run_id``)
SPEC_VIEW_COLUMNS: tuple[str, ...] = _view_columns()
#: derived columns and the property that computes each
_DERIVED = {"optimizer": "optimizer_name"}
_MODEL_COLUMNS = frozenset(f"model_{role}" for role in ROLES)


class Resolution(BaseModel):
    """What a job really used, under the original Trace-Bench's names (written as ``resolved_<name>``).
    Our resolution has no guide or logger kwargs: those stay empty."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    trainer_kwargs: dict[str, Any] = Field(default_factory=dict, description="every default filled in")
    optimizer: str | None = Field(default=None, description="the optimizer the job really used")
    optimizer_kwargs: dict[str, Any] = Field(default_factory=dict, description="the task's optimizer kwargs "
                                             "updated with the config's")
    guide: str | None = Field(default=None, description="class of the task's guide")
    guide_kwargs: dict[str, Any] = Field(default_factory=dict)
    logger: str | None = None
    logger_kwargs: dict[str, Any] = Field(default_factory=dict)

    @classmethod
    def planned(cls, spec: JobSpec) -> Resolution:
        """What the specification alone says (before the job built its problem)."""
        return cls.model_construct(trainer_kwargs=spec.trainer_kwargs, optimizer=spec.optimizer_name or None,
                                   optimizer_kwargs=spec.optimizer_kwargs, guide=None, guide_kwargs={},
                                   logger=spec.logger, logger_kwargs={})


#: where a Resolution's fields are written: ``resolved_<field>`` (the original's names)
RESOLVED_PREFIX = "resolved_"
RESOLVED_FIELDS: tuple[str, ...] = tuple(RESOLVED_PREFIX + name for name in Resolution.model_fields)

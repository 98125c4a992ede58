"""The original Trace-Bench's ``resolved_*`` fields of a job, as far as its specification knows them.

job_meta.json, results.json, the manifest and results.csv carry them under the original's names.
The driver fills them from the :class:`JobSpec`; the job process replaces the optimizer's name and
kwargs (the task's optimizer kwargs updated with the config's) and adds the guide's class once the
task's problem is built (``trace_bench.runner.training.resolved_settings``).  Our resolution has no
guide or logger kwargs: those stay empty.
"""

from __future__ import annotations

from typing import Any

from trace_bench.config.model_names import role_models
from trace_bench.matrix.expand import JobSpec
from trace_bench.store import jsonio
from trace_bench.store.models import RESOLVED_FIELDS

DEFAULT_OPTIMIZER = "OptoPrime"


def default_optimizer(trainer: str) -> str:
    """The optimizer a job uses when its config names none: OptoPrime for a trainer built on an opto
    optimizer; empty for one that uses none (an external library's own update rule, the baseline,
    opto's own trainers, which resolve their optimizer in the job)."""
    from trace_bench.registry.trainers import resolve_trainer

    try:
        cls = resolve_trainer(trainer).cls
    except Exception:  # an unknown or broken trainer: the job itself will say why
        return DEFAULT_OPTIMIZER
    return DEFAULT_OPTIMIZER if getattr(cls, "uses_optimizer", True) else ""


def resolved_from_spec(spec: JobSpec) -> dict[str, Any]:
    """The optimizer and per-role models, ``eval_kwargs``, the ``resolved_*`` fields and the LLM
    endpoint of a job (JSON-ready)."""
    models = role_models(spec.llm_identity)
    optimizer = spec.optimizer or default_optimizer(spec.trainer)
    return {"optimizer": optimizer,
            **{f"model_{role}": model for role, model in models.items()},
            "eval_kwargs": jsonio.plain(spec.eval_kwargs), "resolved_trainer_kwargs": jsonio.plain(spec.trainer_kwargs),
            "resolved_optimizer": optimizer or None,
            "resolved_optimizer_kwargs": jsonio.plain(spec.optimizer_kwargs), "resolved_guide": None,
            "resolved_guide_kwargs": {}, "resolved_logger": spec.logger, "resolved_logger_kwargs": {},
            "llm_provider": str(spec.llm.get("provider") or ("stub" if spec.mode == "stub" else "")),
            "llm_base_url": str(spec.llm.get("base_url") or "")}


def resolved_fields(spec: JobSpec) -> dict[str, Any]:
    """Only the ``resolved_*`` fields (what job_meta.json and a manifest entry carry)."""
    return {name: value for name, value in resolved_from_spec(spec).items() if name in RESOLVED_FIELDS}


def resolved_of(record: Any) -> dict[str, Any]:
    """The ``resolved_*`` fields of a job record (``JobResult``, or a ``LazyResult``: one parse)."""
    fields = getattr(type(record), "fields", None)
    if callable(fields):
        return record.fields(RESOLVED_FIELDS)
    return {name: getattr(record, name) for name in RESOLVED_FIELDS}

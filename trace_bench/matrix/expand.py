"""Matrix expansion: tasks -> trainers -> params variants -> seeds, each cell a frozen
:class:`~trace_bench.store.models.JobSpec` (declared in the store: the manifest, job_meta.json and
the job's record embed it)."""

from __future__ import annotations

import json
from typing import Any

from pydantic import ValidationError

from trace_bench._util.errors import ConfigError, did_you_mean
from trace_bench.config.models import RunConfig, TrainerEntry
from trace_bench.matrix.checks import check_eval_kwargs, check_optimizer, check_parameter_kinds, knob_label
from trace_bench.matrix.identity import arm_job_ids, llm_identity
from trace_bench.registry.tasks import TaskCatalog
from trace_bench.registry.trainers import resolve_trainer
from trace_bench.store.models.spec import JobSpec

__all__ = ["LOGGERS", "JobSpec", "canonical_logger", "expand_matrix", "params_label", "resolve_variant"]

#: one set shared by every constructed JobSpec (pydantic keeps a set of given fields per instance:
#: 2 KB each, 200 MB on a 100,000-job matrix)
_ALL_FIELDS = frozenset(JobSpec.model_fields)

# Keys that may appear among trainer knobs but configure the optimizer/harness, not the trainer.
_PASS_THROUGH = ("optimizer", "optimizer_kwargs", "guide", "guide_kwargs", "logger", "logger_kwargs", "eval_kwargs")


def params_label(variant: dict[str, Any]) -> str:
    if not variant:
        return "default"
    return ",".join(f"{k}={json.dumps(v, sort_keys=True) if isinstance(v, (dict, list)) else v}"
                    for k, v in sorted(variant.items()))


def task_label(task_id: str, eval_kwargs: dict[str, Any], variants: int) -> str:
    """How a task is named in every ranking and table: its id, or, when the run has the task under
    several ``eval_kwargs`` (each its own task), ``id[k=v,...]``."""
    return f"{task_id}[{params_label(eval_kwargs)}]" if variants > 1 else task_id


def _entry_fields(entry: TrainerEntry) -> dict[str, Any]:
    fields: dict[str, Any] = {}
    if entry.optimizer is not None:
        fields["optimizer"] = entry.optimizer
    if entry.optimizer_kwargs:
        fields["optimizer_kwargs"] = entry.optimizer_kwargs
    if entry.logger is not None:
        fields["logger"] = entry.logger
    return fields


def _last(key: str, layers: list[dict[str, Any]]) -> Any:
    value = None
    for layer in layers:
        if layer.get(key) is not None:
            value = layer[key]
    return value


def resolve_variant(entry: TrainerEntry, variant: dict[str, Any], global_kwargs: dict[str, Any],
                    where: str, budgeted: bool = False) -> tuple[str, dict[str, Any], str | None, dict[str, Any],
                                                             str | None]:
    """(trainer id, validated trainer kwargs, optimizer, optimizer kwargs, logger) for one variant;
    ``budgeted``: the jobs have a budget, so the trainer's iteration knob is freed unless set."""
    try:
        info = resolve_trainer(entry.id)
    except ConfigError as exc:
        raise ConfigError(exc.reason, key_path=f"{where.split('.')[0]}.id", hint=exc.hint) from None
    if info.cls is None or info.reason:
        raise ConfigError(f"trainer '{info.id}' is unavailable: {info.reason}", key_path=where)
    cls = info.cls
    # Precedence (later wins): run-wide trainer_kwargs/top-level knobs < beside `id` < the variant.
    layers = [dict(global_kwargs), {**entry.knobs, **_entry_fields(entry)}, dict(variant)]
    optimizer = _last("optimizer", layers)
    logger = canonical_logger(_last("logger", layers), f"{where}.logger")
    optimizer_kwargs: dict[str, Any] = {}
    for layer in layers:
        optimizer_kwargs.update(layer.pop("optimizer_kwargs", None) or {})
        for key in ("optimizer", "logger", "guide", "guide_kwargs", "logger_kwargs", "eval_kwargs"):
            layer.pop(key, None)
    allowed = cls.allowed_knobs()
    # Run-wide knobs are shared by every trainer of the config (the original applied ps_* to all):
    # a trainer ignores the ones it does not have. Knobs given for this trainer must all be valid.
    shared = {k: v for k, v in cls.resolve_kwargs(layers[0]).items() if k in cls.Params.model_fields}
    kwargs = {**shared, **cls.resolve_kwargs({**layers[1], **layers[2]})}
    if budgeted:  # budgets bind: the iteration knob the config left unset is freed
        kwargs = cls.free_for_budget(kwargs)
    for key in kwargs:
        if key not in cls.Params.model_fields:
            hint = did_you_mean(key, allowed)
            raise ConfigError(f"unknown knob '{key}' for trainer {info.id}", key_path=where,
                              hint=hint or f"allowed: {', '.join(allowed)}")
    try:
        params = cls.Params.model_validate(kwargs)
    except ValidationError as exc:
        first = exc.errors()[0]
        field_name = knob_label(".".join(str(p) for p in first.get("loc", ())), cls.all_aliases(),
                                [k for layer in layers for k in layer])
        raise ConfigError(f"invalid value for {field_name}: {first.get('msg')} (got {first.get('input')!r})",
                          key_path=where) from None
    if optimizer is not None:
        canonical = check_optimizer(optimizer, f"{where}.optimizer")
        optimizer = canonical if getattr(cls, "uses_optimizer", True) else optimizer
    return info.id, params.model_dump(mode="json"), optimizer, optimizer_kwargs, logger


LOGGERS = ("ConsoleLogger", "TensorboardLogger", "none")
_LOGGER_ALIASES = {"consolelogger": "ConsoleLogger", "defaultlogger": "ConsoleLogger", "console": "ConsoleLogger",
                   "default": None, "config": None, "tensorboardlogger": "TensorboardLogger",
                   "tensorboard": "TensorboardLogger", "none": "none", "null": "none", "off": "none",
                   "disable": "none", "disabled": "none", "nulllogger": "none"}


def canonical_logger(name: str | None, where: str = "logger") -> str | None:
    """The logger a job uses for step lines in stdout.log (never part of the job identity)."""
    if name is None:
        return None
    key = name.lower()
    if key not in _LOGGER_ALIASES:
        raise ConfigError(f"unknown logger '{name}'", key_path=where,
                          hint=did_you_mean(name, list(LOGGERS)) or f"choose from {', '.join(LOGGERS)}")
    return _LOGGER_ALIASES[key]


def expand_matrix(config: RunConfig, catalog: TaskCatalog, *, logger_override: str | None = None) -> list[JobSpec]:
    if not config.tasks:
        raise ConfigError("no tasks: add a 'tasks:' list", key_path="tasks")
    check_eval_kwargs(config)
    trainers = config.trainers or [TrainerEntry(id="PrioritySearch")]
    override = canonical_logger(logger_override, "--logger") if logger_override else None
    identity = llm_identity(config)
    identity_json = identity.model_dump(mode="json")
    task_cells: list[tuple[str, dict[str, Any], str | None]] = []
    task_where: dict[str, str] = {}
    seen: set[str] = set()
    for t_index, entry in enumerate(config.tasks):
        for task_id in catalog.expand(entry.id):
            try:
                spec = catalog.get(task_id)
            except ConfigError as exc:
                raise ConfigError(exc.reason, key_path=f"tasks[{t_index}].id", hint=exc.hint) from None
            eval_kwargs = {**config.eval_kwargs, **entry.eval_kwargs}
            reason = catalog.unavailability(spec, eval_kwargs)
            if config.mode == "stub" and spec.stub_without_availability:
                reason = None
            if reason is not None and reason.config_error:  # fixable here and now: say how, like a trainer extra
                raise ConfigError(f"task '{spec.id}' is unavailable: {reason}", key_path=f"tasks[{t_index}].id")
            key = f"{spec.id}|{json.dumps(eval_kwargs, sort_keys=True, default=str)}"
            if key not in seen:
                seen.add(key)
                # An unavailable task does not void the config (the original skipped it too): its
                # jobs are recorded ``skipped`` with the reason and run on a resume once available.
                task_cells.append((spec.id, eval_kwargs, f"task unavailable: {reason}" if reason else None))
                task_where[key] = f"tasks[{t_index}]"
    resolved_trainers = []
    for r_index, trainer_entry in enumerate(trainers):
        for v_index, variant in enumerate(trainer_entry.variants()):
            where = f"trainers[{r_index}]" + (f".params_variants[{v_index}]" if trainer_entry.params_variants else "")
            shown = {**{k: v for k, v in trainer_entry.knobs.items()}, **variant}  # what distinguishes this arm
            if trainer_entry.optimizer is not None and "optimizer" not in shown:
                shown = {"optimizer": trainer_entry.optimizer, **shown}  # two entries differing only here: two arms
            resolved_trainers.append((where, shown,
                                      *resolve_variant(trainer_entry, variant, config.trainer_kwargs, where,
                                                      budgeted=any(v is not None for v in config.budget.model_dump().values()))))
    jobs: list[JobSpec] = []
    origin: dict[str, str] = {}
    eval_variants: dict[str, int] = {}
    for task_id, _, _ in task_cells:
        eval_variants[task_id] = eval_variants.get(task_id, 0) + 1
    for task_id, eval_kwargs, skip_reason in task_cells:
        suite = task_id.split(":", 1)[0]
        cell_where = task_where[f"{task_id}|{json.dumps(eval_kwargs, sort_keys=True, default=str)}"]
        named = task_label(task_id, eval_kwargs, eval_variants[task_id])  # each variant is its own task
        for where, variant, trainer_id, kwargs, optimizer, optimizer_kwargs, logger in resolved_trainers:
            trainer_cls = resolve_trainer(trainer_id).cls
            check_parameter_kinds(trainer_cls, catalog.get(task_id), f"{where} with {cell_where}")
            uses_optimizer = bool(getattr(trainer_cls, "uses_optimizer", True))
            label = params_label(variant)
            seed_job_id = arm_job_ids(task=task_id, eval_kwargs=eval_kwargs, trainer=trainer_id, trainer_kwargs=kwargs,
                                      optimizer=optimizer, optimizer_kwargs=optimizer_kwargs, llm=identity_json)
            for seed in config.seeds:
                jid = seed_job_id(seed)
                if jid in origin:
                    raise ConfigError(f"{where} with {cell_where} is the same arm as {origin[jid]} (same task, "
                                      "eval_kwargs, trainer, knobs, optimizer and models): results would be pooled",
                                      key_path=where, hint="remove one entry, or make them differ")
                origin[jid] = f"{where} with {cell_where}"
                # validated above; the seeds of an arm share its mappings (no copy per job)
                jobs.append(JobSpec.model_construct(
                    _fields_set=_ALL_FIELDS,  # type: ignore[arg-type]  # a frozenset: shared, never changed
                    job_id=jid, index=len(jobs), task=task_id, suite=suite, eval_kwargs=eval_kwargs,
                    trainer=trainer_id, params=variant, params_label=label, trainer_kwargs=kwargs,
                    optimizer=optimizer, optimizer_kwargs=optimizer_kwargs, seed=seed, mode=config.mode, llm=config.llm,
                    llm_identity=identity, budget=config.budget, logger=override or logger,
                    task_root=str(catalog.root) if catalog.root else None, skip_reason=skip_reason,
                    sandbox=config.sandbox, task_label=named, uses_optimizer=uses_optimizer,
                ))
    return jobs

"""Config checks that need the registry's knowledge but must fail at validate time, not in a job.

Each was a job failure after minutes of work (an optimizer name a trainer's context rejects, a
negative evaluation timeout); here they are config errors with the key path and a fix.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Any

from trace_bench._util.errors import ConfigError, did_you_mean
from trace_bench.config.models import RunConfig


def check_optimizer(name: str, where: str) -> str:
    """The canonical optimizer name, or a ConfigError with the closest valid one.

    Every trainer's context resolves the optimizer name, including trainers that never build an
    optimizer, so the name is checked for every trainer."""
    from trace_bench.trainers.optimizers import OPTIMIZERS, canonical_optimizer

    try:
        return canonical_optimizer(name)
    except ValueError:
        from trace_bench.trainers.opto_native.discovery import native_optimizers

        if str(name).startswith("opto:") and not native_optimizers():
            return str(name)  # opto's optimizers could not be read statically: the job resolves the name
        raise ConfigError(f"unknown optimizer '{name}'", key_path=where,
                          hint=did_you_mean(str(name), OPTIMIZERS) or f"choose one of {', '.join(OPTIMIZERS)}") from None


def knob_label(field: str, aliases: dict[str, str], given: Iterable[str]) -> str:
    """``field`` as the user wrote it: ``ps_steps (num_steps)`` when an alias was given."""
    for key in given:
        normalised = key.replace("-", "_")
        if normalised != field and aliases.get(normalised) == field:
            return f"{key} ({field})"
    return field


def _number(value: Any) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str):
        try:
            return float(value)
        except ValueError:
            return None
    return None


def _positive_number(value: Any) -> str | None:
    number = _number(value)
    return None if number is not None and math.isfinite(number) and number > 0 else "a positive number"


def _positive_integer(value: Any) -> str | None:
    number = _number(value)
    return None if number is not None and number.is_integer() and number >= 1 else "a positive integer"


def _integer(value: Any) -> str | None:
    number = _number(value)
    return None if number is not None and number.is_integer() else "an integer"


# eval_kwargs that the harness and its suites interpret the same way wherever they appear
# (sandbox limits, instance counts, Harbor's timeout, the evaluation seed).
HARNESS_EVAL_KWARGS: dict[str, Callable[[Any], str | None]] = {
    "timeout_seconds": _positive_number, "timeout_s": _positive_number, "harbor_cli_timeout_seconds": _positive_number,
    "memory_mb": _positive_integer, "n_instances": _positive_integer, "num_problems": _positive_integer,
    "max_tokens": _positive_integer, "seed": _integer,
}


def check_eval_kwargs(config: RunConfig) -> None:
    """Reject well-known eval_kwargs with values no task can use (e.g. ``timeout_seconds: -1``)."""
    sources = [("eval_kwargs", config.eval_kwargs)]
    sources += [(f"tasks[{i}].eval_kwargs", entry.eval_kwargs) for i, entry in enumerate(config.tasks)]
    for where, kwargs in sources:
        for key, check in HARNESS_EVAL_KWARGS.items():
            value = kwargs.get(key)
            if value is None:
                continue
            expected = check(value)
            if expected:
                raise ConfigError(f"must be {expected} (got {value!r})", key_path=f"{where}.{key}")


def check_parameter_kinds(trainer: Any, task: Any, where: str) -> None:
    """ConfigError when ``trainer`` (a class) can change none of the parameter kinds ``task`` (a
    ``TaskSpec``) declares: its ``optimizes_only`` and the task's ``parameter_kinds`` share none, so
    the job would fail at its start (DSPyTrainer changes instructions and numbers, never code).
    Either side declaring nothing passes."""
    wanted = tuple(getattr(trainer, "optimizes_only", ()) or ())
    given = tuple(getattr(task, "parameter_kinds", ()) or ())
    if not wanted or not given or set(wanted) & set(given):
        return
    from trace_bench.registry.trainer_catalog import BUILTIN_TRAINERS

    able = [meta.id for meta in sorted(BUILTIN_TRAINERS, key=lambda meta: meta.source != "external")
            if set(meta.parameters) & set(given) - {"continuous"}][:4]
    name = getattr(trainer, "id", "") or getattr(trainer, "__name__", "the trainer")
    raise ConfigError(f"trainer {name} optimizes only {' and '.join(wanted)} parameters; task '{task.id}' has "
                      f"only {' and '.join(given)} parameters, so its jobs could not change anything",
                      key_path=where, hint=f"use a trainer for {' and '.join(given)} parameters (such as "
                                           f"{', '.join(able)}) on this task, or remove the pair")

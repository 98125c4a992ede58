"""Trainer classes for ``opto``'s own trainers, built from the static description of each.

A native trainer gets the id ``opto:<Name>`` and, when no trace-bench trainer already answers to
``<Name>`` (case-insensitively, aliases included), ``<Name>`` as an alias: our PrioritySearch stays
the default ``PrioritySearch`` while ``POLCA`` or ``ParetobasedPS`` need no prefix.  Its knobs are
the keyword parameters of the class's ``__init__`` and ``train`` (read statically, with opto's
defaults), so a misspelled knob is a config error like for any trainer; the original's ``ps_*``
spellings apply to every trainer that has the target knob.  ``train`` runs in the job process,
see :mod:`.runtime`.
"""

from __future__ import annotations

from abc import ABCMeta
from functools import lru_cache
from typing import Any, ClassVar

from pydantic import create_model

from trace_bench.trainers.base import Trainer, TrainerParams
from trace_bench.trainers.opto_native.discovery import NativeSignature, NativeTrainer, signature

PREFIX = "opto:"


class _LazyKnobs(ABCMeta):
    """``Params`` and ``knob_aliases`` of a native trainer are built on first use: reading opto's
    sources for them costs tens of milliseconds, which listing must not pay."""

    @property
    def Params(cls) -> type[TrainerParams]:  # noqa: N802 - the Trainer class attribute's name
        return _params_model(cls.native)  # type: ignore[attr-defined]

    @property
    def knob_aliases(cls) -> dict[str, str]:
        return _knob_aliases(cls.Params)

    @property
    def signature(cls) -> NativeSignature:
        return signature(cls.native)  # type: ignore[attr-defined]


class OptoNativeTrainer(Trainer, metaclass=_LazyKnobs):
    """Runs one of ``opto.trainer.algorithms``'s classes under the harness (metering, budgets, curves)."""

    family = "opto"
    source = "opto"
    uses_optimizer = False  # the optimizer name is opto's (OptoPrimeV2, OPROv2, ...), resolved in the job
    native: ClassVar[NativeTrainer]

    def train(self) -> None:
        from trace_bench.trainers.opto_native.runtime import run_native

        run_native(self.ctx, self.native, type(self).signature, self.params)


@lru_cache(maxsize=32)
def _params_model(native: NativeTrainer) -> type[TrainerParams]:
    found = signature(native)
    fields: dict[str, Any] = {}
    for knob, default in {**found.init_knobs, **found.train_knobs}.items():
        if knob not in TrainerParams.model_fields:
            fields[knob] = (Any, default)
    return create_model(f"{native.name}Params", __base__=TrainerParams, **fields)


def _knob_aliases(params: type[TrainerParams]) -> dict[str, str]:
    from trace_bench.trainers.opto_search.priority_search import PS_ALIASES

    return {alias: target for alias, target in PS_ALIASES.items() if target in params.model_fields}


def make_trainer_class(native: NativeTrainer, taken: set[str]) -> type[OptoNativeTrainer]:
    """The trainer class for ``native``; ``taken`` holds the lower-cased ids and aliases already in use."""
    namespace = {
        "id": f"{PREFIX}{native.name}",
        "aliases": tuple(alias for name in (native.name, *native.also_exported_as)
                         for alias in (f"{PREFIX}{name}", name)
                         if alias != f"{PREFIX}{native.name}" and alias.lower() not in taken),
        "description": f"opto's own {native.name} ({native.module}), run by the harness",
        "native": native,
        "__module__": __name__,
    }
    return type(f"Native{native.name}", (OptoNativeTrainer,), namespace)


def native_trainer_classes(taken: set[str]) -> list[type[OptoNativeTrainer]]:
    """One class per trainer the installed ``opto`` exports; [] on ``trace-opt`` 0.1.3.8."""
    from trace_bench.trainers.opto_native.discovery import native_trainers

    return [make_trainer_class(native, taken) for native in native_trainers().values()]

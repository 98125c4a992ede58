"""The public face of trainers: what a trainer's author imports (docs/adding-trainer.md).

``from trace_bench.trainers import Trainer, TrainerParams`` and the context a trainer is handed
(:class:`TrainerContext`, with the records it returns: :class:`EvalResult`, :class:`StepReport`,
:class:`DataLoader`), and the words to say why it cannot run here (:class:`Unavailable`).  Every
other module under ``trace_bench.trainers`` is the harness's own.  The names are imported on first
use, so importing a trainer module (or listing trainers, which imports none) costs nothing more.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trace_bench._util.lazy import exports

if TYPE_CHECKING:
    from trace_bench._util.availability import Unavailable, UnavailableKind
    from trace_bench.trainers.base import Trainer, TrainerParams
    from trace_bench.trainers.context import DataLoader, EvalResult, StepReport, TrainerContext

_EXPORTS = {
    "Trainer": "trace_bench.trainers.base",
    "TrainerParams": "trace_bench.trainers.base",
    "TrainerContext": "trace_bench.trainers.context",
    "EvalResult": "trace_bench.trainers.context",
    "StepReport": "trace_bench.trainers.context",
    "DataLoader": "trace_bench.trainers.context",
    "Unavailable": "trace_bench._util.availability",
    "UnavailableKind": "trace_bench._util.availability",
}

__all__ = ["DataLoader", "EvalResult", "StepReport", "Trainer", "TrainerContext", "TrainerParams", "Unavailable",
           "UnavailableKind"]

__getattr__ = exports(__name__, _EXPORTS)

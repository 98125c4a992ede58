"""``opto``'s own trainers and optimizers, when the installed ``opto`` has them (OpenTrace 0.2.x).

:mod:`.discovery` reads what ``opto`` exports without importing it (listing stays fast);
:mod:`.adapter` turns each trainer into a trace-bench trainer (``opto:<Name>``); :mod:`.runtime`
runs it inside a job under the harness's metering, budgets, curves and artifacts.
"""

from __future__ import annotations

from collections.abc import Iterable

from trace_bench.trainers.opto_native.adapter import PREFIX, OptoNativeTrainer, native_trainer_classes

__all__ = ["PREFIX", "OptoNativeTrainer", "native_trainer_classes", "warm"]


def warm(trainer_classes: Iterable[type[OptoNativeTrainer] | None]) -> None:
    """For the job template: import ``opto.trainer.algorithms`` and build the knobs of each of
    ``trainer_classes`` (the registry's native trainers) once, so forked jobs start warm.  A no-op
    when there are none (``opto`` without a trainer package)."""
    classes = [cls for cls in trainer_classes if cls is not None]
    if not classes:
        return
    import opto.trainer.algorithms  # noqa: F401 - imported for the forked jobs

    for cls in classes:
        cls.Params  # noqa: B018 - builds and caches the knobs model

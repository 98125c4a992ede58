"""``opto``'s own trainers and optimizers, when the installed ``opto`` has them (OpenTrace 0.2.x).

:mod:`.discovery` reads what ``opto`` exports without importing it (listing stays fast);
:mod:`.adapter` turns each trainer into a trace-bench trainer (``opto:<Name>``); :mod:`.runtime`
runs it inside a job under the harness's metering, budgets, curves and artifacts.
"""

from __future__ import annotations

from trace_bench.trainers.opto_native.adapter import PREFIX, OptoNativeTrainer, native_trainer_classes

__all__ = ["PREFIX", "OptoNativeTrainer", "native_trainer_classes", "warm"]


def warm() -> None:
    """For the job template: import ``opto.trainer.algorithms`` and read every native trainer's
    knobs once, so forked jobs start warm.  A no-op where opto has no trainer package."""
    from trace_bench.trainers.opto_native.discovery import native_trainers

    if not native_trainers():
        return
    import opto.trainer.algorithms  # noqa: F401 - imported for the forked jobs

    from trace_bench.registry.trainers import all_trainers

    for info in all_trainers().values():
        if info.source == "opto" and info.cls is not None:
            info.cls.Params  # noqa: B018 - builds and caches the knobs model

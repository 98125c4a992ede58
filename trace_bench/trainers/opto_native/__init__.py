"""``opto``'s own trainers and optimizers, when the installed ``opto`` has them (OpenTrace 0.2.x).

:mod:`.discovery` reads what ``opto`` exports without importing it (listing stays fast);
:mod:`.adapter` turns each trainer into a trace-bench trainer (``opto:<Name>``); :mod:`.runtime`
runs it inside a job under the harness's metering, budgets, curves and artifacts.
"""

from __future__ import annotations

from trace_bench.trainers.opto_native.adapter import PREFIX, OptoNativeTrainer, native_trainer_classes

__all__ = ["PREFIX", "OptoNativeTrainer", "native_trainer_classes"]

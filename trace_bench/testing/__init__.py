"""Test kit shipped with trace-bench: contract checks any trainer (ours or a plugin's) must pass.

Import what you need from the submodules, or through the names below::

    from trace_bench.testing import check_trainer, trainer_contract_test
"""

from __future__ import annotations

from typing import Any

_EXPORTS = {
    name: "trace_bench.testing.trainer_contract"
    for name in ("JobOutcome", "check_budget", "check_curve", "check_determinism", "check_restorable",
                 "check_trainer", "run_trainer", "trainer_contract_test")
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        import importlib

        return getattr(importlib.import_module(_EXPORTS[name]), name)
    raise AttributeError(name)

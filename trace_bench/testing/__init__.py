"""Test kit shipped with trace-bench: contract checks any trainer (ours or a plugin's) must pass.

Import what you need from the submodules, or through the names below::

    from trace_bench.testing import check_trainer, trainer_contract_test

``contract_cases`` lists every registered trainer with the short settings of its catalog row, as
the project's own contract test runs them.
"""

from __future__ import annotations

from trace_bench._util.lazy import exports

_EXPORTS = {
    **{name: "trace_bench.testing.trainer_contract"
       for name in ("DEFAULT_TASK", "JobOutcome", "check_budget", "check_curve", "check_determinism",
                    "check_restorable", "check_trainer", "run_trainer", "trainer_contract_test")},
    **{name: "trace_bench.testing.registered" for name in ("ContractCase", "contract_cases")},
}

__all__ = sorted(_EXPORTS)

__getattr__ = exports(__name__, _EXPORTS)

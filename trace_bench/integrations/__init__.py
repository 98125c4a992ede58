"""The original Trace-Bench's integration API for external optimizers (see :mod:`.opto`)."""

from __future__ import annotations

from trace_bench.integrations.opto import BundleEval, evaluate_bundle, load_and_evaluate

__all__ = ["BundleEval", "evaluate_bundle", "load_and_evaluate"]

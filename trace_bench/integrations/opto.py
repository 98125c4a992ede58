"""``trace_bench.integrations.opto``: the original's names for evaluating a task's problem outside
a run (``BundleEval``, ``evaluate_bundle``, ``load_and_evaluate``), kept for external optimizers
that call them.  The implementation is :mod:`trace_bench.legacy.evaluation`; the original's
"bundle" is what trace-bench calls a problem.
"""

from __future__ import annotations

from trace_bench.legacy.evaluation import ProblemEvaluation as BundleEval
from trace_bench.legacy.evaluation import evaluate_problem as evaluate_bundle
from trace_bench.legacy.evaluation import load_and_evaluate

__all__ = ["BundleEval", "evaluate_bundle", "load_and_evaluate"]

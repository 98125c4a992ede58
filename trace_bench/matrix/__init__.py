"""Matrix expansion (``expand``) and identities (``identity``).

``trace_bench.matrix.expand_matrix(config)`` and ``compute_job_id`` are the original Trace-Bench's
API (:mod:`trace_bench.legacy.matrix`); trace-bench's own code uses ``matrix.expand``.
"""

from __future__ import annotations

from trace_bench._lazy import lazy_getattr

__getattr__ = lazy_getattr(__name__, {"expand_matrix": "trace_bench.legacy.matrix",
                                      "compute_job_id": "trace_bench.legacy.matrix",
                                      "LegacyJob": "trace_bench.legacy.matrix",
                                      "JobSpec": "trace_bench.matrix.expand"})

"""Matrix expansion (``expand``) and identities (``identity``).

``trace_bench.matrix.expand_matrix(config)`` and ``compute_job_id`` are the original Trace-Bench's
API (:mod:`trace_bench.compat.matrix`); trace-bench's own code uses ``matrix.expand``.
"""

from __future__ import annotations

from trace_bench.compat.exports import lazy_getattr

__getattr__ = lazy_getattr(__name__, {"expand_matrix": "trace_bench.compat.matrix",
                                      "compute_job_id": "trace_bench.compat.matrix",
                                      "LegacyJob": "trace_bench.compat.matrix",
                                      "JobSpec": "trace_bench.matrix.expand"})

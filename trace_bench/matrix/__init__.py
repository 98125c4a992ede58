"""Matrix expansion (``expand``) and identities (``identity``).

The original Trace-Bench's ``trace_bench.matrix.expand_matrix`` and ``compute_job_id`` still
resolve, with a DeprecationWarning (docs/coming-from-original.md); trace-bench's own code uses
``trace_bench.matrix.expand``.
"""

from __future__ import annotations

from trace_bench._util.relocated import relocated_getattr

__getattr__ = relocated_getattr(__name__)

"""The run directory: typed records of every file, one read/write API, atomic writers, masking.

Start at :class:`RunStore` (a run) and :class:`JobStore` (one job of it); the storage contract
is written on ``RunStore``.  Names are loaded on first use, so that ``import trace_bench._util.masking``
(done by the LLM layer and the sandbox) stays cheap.
"""

from __future__ import annotations

from trace_bench._util.lazy import exports

_EXPORTS = {
    "RunStore": "trace_bench.store.run_store",
    "RunLock": "trace_bench.store.run_guard",
    "RunLocked": "trace_bench.store.run_guard",
    "RunNotFound": "trace_bench.store.run_store",
    "JobStore": "trace_bench.store.job_store",
    "HeartbeatThread": "trace_bench.store.heartbeat",
    "Status": "trace_bench.store.status",
    "SUCCESSFUL": "trace_bench.store.status",
    "COMPLETE": "trace_bench.store.status",
    "FAILED": "trace_bench.store.status",
    "StoreError": "trace_bench.store.models",
    "utc_now": "trace_bench.store.events",
    "mask_secrets": "trace_bench._util.masking",
}

__getattr__ = exports(__name__, _EXPORTS)
__all__ = sorted(_EXPORTS)

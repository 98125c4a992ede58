"""The task and trainer registry (``tasks``, ``trainers``, ``specs``).

The list commands import this package, so it imports nothing.  The original Trace-Bench's
functions on this path (``load_task_bundle``, ``discover_tasks``, ...) still resolve, with a
DeprecationWarning (docs/coming-from-original.md).
"""

from __future__ import annotations

from trace_bench._util.relocated import relocated_getattr

__getattr__ = relocated_getattr(__name__)

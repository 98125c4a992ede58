"""The ``trace-bench`` command line: parses and prints, nothing more.

The original Trace-Bench's ``cmd_*`` functions on this package still resolve, with a
DeprecationWarning (docs/coming-from-original.md); this package imports nothing.
"""

from __future__ import annotations

from trace_bench._util.relocated import relocated_getattr

__getattr__ = relocated_getattr(__name__)

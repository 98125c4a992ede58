"""The ``trace-bench`` command line: parses and prints, nothing more.

``cmd_run``, ``cmd_validate``, ``cmd_list_tasks``, ``cmd_list_trainers`` and ``cmd_ui`` with the
original Trace-Bench's signatures are kept for scripts that call them
(:mod:`trace_bench.legacy.cli`).
"""

from __future__ import annotations

from trace_bench._lazy import lazy_getattr

__getattr__ = lazy_getattr(__name__, {name: "trace_bench.legacy.cli" for name in (
    "cmd_list_tasks", "cmd_list_trainers", "cmd_validate", "cmd_run", "cmd_ui")})

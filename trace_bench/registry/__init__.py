"""The task and trainer registry (``tasks``, ``trainers``, ``specs``).

The package also answers the original Trace-Bench's ``trace_bench.registry`` functions
(``load_task_bundle``, ``discover_tasks``, ``discover_trainers``, ...), imported on first use from
:mod:`trace_bench.legacy.registry`; the list commands import this package, so it imports nothing.
"""

from __future__ import annotations

from trace_bench._lazy import lazy_getattr

_LEGACY = "trace_bench.legacy.registry"
__getattr__ = lazy_getattr(__name__, {name: _LEGACY for name in (
    "TrainerSpec", "discover_hf_tasks", "discover_internal", "discover_llm4ad", "discover_tasks",
    "discover_terminal_bench", "discover_trace_examples", "discover_trainers", "discover_veribench",
    "ensure_llm4ad_importable", "ensure_opto_importable", "expand_special_tasks", "load_task_bundle", "load_task_module",
)} | {"normalize_task_id": "trace_bench.registry.tasks", "TaskSpec": "trace_bench.registry.specs"})

"""Run untrusted, LLM-written code in a disposable, isolated process and get plain data back.

Public API::

    from trace_bench.sandbox import SandboxLimits, run_sandboxed
    result = run_sandboxed("trace_bench.tasks.llm4ad.tsp_construct:solve", {"program": source, "seed": 1},
                           SandboxLimits(wall_s=5, memory_mb=512))
    if result.ok:
        tours = result.value  # plain data, as untrusted as the code that produced it

The target is a function of ours that runs inside the sandbox and usually ``exec``s the
candidate.  Everything in that process is hostile by assumption, so its return value is only
data: the trusted evaluator in the job process validates it and computes the score (a target
never reports a score the job takes on trust).  Isolation (:mod:`.policy`): bubblewrap with
user, PID, mount, network and IPC namespaces, read-only binds of only what Python needs, a
private tmpfs per call, an empty environment, rlimits, a seccomp filter, and a PID namespace
per call so that a timeout kills every process the call started.  Where bubblewrap cannot run,
candidate code is refused unless the weak mode was allowed (:mod:`.mode`).
"""

from __future__ import annotations

from trace_bench.sandbox.codec import CodecError
from trace_bench.sandbox.limits import STATUSES, SandboxLimits, SandboxResult, Status
from trace_bench.sandbox.mode import (
    SETTING_ENV,
    SandboxUnavailable,
    allow_weak,
    availability,
    quick_check,
    require,
    sandbox_info,
    used_modes,
)
from trace_bench.sandbox.runner import capabilities, run_sandboxed, warm_up
from trace_bench.sandbox.server import shutdown

__all__ = [
    "SETTING_ENV",
    "STATUSES",
    "CodecError",
    "SandboxLimits",
    "SandboxResult",
    "SandboxUnavailable",
    "Status",
    "allow_weak",
    "availability",
    "capabilities",
    "quick_check",
    "require",
    "run_sandboxed",
    "sandbox_info",
    "shutdown",
    "used_modes",
    "warm_up",
]

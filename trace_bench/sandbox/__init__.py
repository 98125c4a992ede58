"""Run untrusted, LLM-written code (heuristics, solutions) in a disposable, limited child process.

Public API::

    from trace_bench.sandbox import SandboxLimits, run_sandboxed
    result = run_sandboxed("trace_bench.tasks.llm4ad.tsp_construct:evaluate", {"program": source},
                           SandboxLimits(wall_s=5, memory_mb=512))
    if result.ok:
        score = result.value

The target is a *trusted* function of ours that runs inside the child and ``exec``s the
candidate.  Protections (Linux gets all of them): own process group killed on timeout, rlimits
(address space, CPU, file size, processes), a fresh temporary working directory removed
afterwards, writes outside it refused, no process creation, no network (private network
namespace plus an audit-hook policy).  See :mod:`trace_bench.sandbox.guard` for what the audit
hook can and cannot promise.
"""

from __future__ import annotations

from trace_bench.sandbox.guard import SandboxDenied
from trace_bench.sandbox.limits import STATUSES, SandboxLimits, SandboxResult, Status
from trace_bench.sandbox.runner import capabilities, run_sandboxed, sandbox_mode, warm_up
from trace_bench.sandbox.server import shutdown

__all__ = [
    "STATUSES",
    "SandboxDenied",
    "SandboxLimits",
    "SandboxResult",
    "Status",
    "capabilities",
    "run_sandboxed",
    "sandbox_mode",
    "shutdown",
    "warm_up",
]

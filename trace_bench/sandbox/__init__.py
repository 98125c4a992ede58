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

Every call runs in processes made from a state that never held a request (:mod:`.zygote`), and
sees of trace-bench only the sandbox package and its target's imports (:mod:`.view`).  What comes
back is bounded before it is decoded (:mod:`.verdict`).  ``SandboxResult.denial`` names the
boundary a call ran into, typed for records and audits: ``timeout``, ``memory``,
``result_too_large``, ``forged_result`` (read by the job and the trusted supervisor), or, for an
uncaught refusal, ``file``, ``network``, ``process`` or ``syscall`` (read from the exception the
child reported: what the code tried).  :mod:`.denials` turns them into job events.

Names are resolved lazily, so that listing tasks does not import the process machinery.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "CodecError": "codec",
    "STATUSES": "limits",
    "SandboxLimits": "limits",
    "SandboxResult": "limits",
    "Status": "limits",
    "SETTING_ENV": "mode",
    "SandboxUnavailable": "mode",
    "allow_weak": "mode",
    "prepare": "mode",
    "prepare_lazily": "mode",
    "availability": "mode",
    "quick_check": "policy",
    "require": "mode",
    "sandbox_info": "mode",
    "used_modes": "mode",
    "weak_warning": "mode",
    "capabilities": "runner",
    "run_sandboxed": "runner",
    "warm_up": "runner",
    "shutdown": "server",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f"{__name__}.{_EXPORTS[name]}"), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

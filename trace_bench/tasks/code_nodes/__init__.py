"""Trainable code nodes (opto's ``@trace.bundle(trainable=True)``): optimizer-written code runs sandboxed.

The contract, for every task and every trainer:

- While a code parameter holds the task author's own source, opto runs it in the job process as
  it always did (it is the task's code).  Once an optimizer changed it, every call of the function
  is one sandboxed call: the new code is defined and run there, on the call's arguments, and only
  its plain-data return value (or its error) comes back; the task's guide scores that value in
  the job process.  So the provider's key, the network, the run directory and the job's memory
  (datasets, references, the guide) are out of reach of what an optimizer writes.
- In the sandbox the function has its arguments, Python's builtins, the modules it imports, the
  modules of the task module's scope (imported again by name, where the sandbox can import them),
  the plain-data globals the author's version reads, and for a method a ``self`` without
  attributes.  A name it cannot find there is a ``NameError`` (an error of that proposal, fed back
  to the optimizer like any other); a call that exceeds the sandbox's limits ends as
  ``TimeoutError`` / ``RuntimeError`` / ``PermissionError`` of the proposal.
- A task that cannot work that way fails before anything runs, with a message that says why
  (:class:`~trace_bench.tasks.code_nodes.support.CodeNodeUnsupported`): its function reads
  ``self``'s attributes (other nodes, methods, bundles, clients), uses a global of its module that
  is not plain data (a helper function, a class, another bundle), or takes or returns values that
  are not plain data.  Nothing ever falls back to running optimizer-written code unsandboxed.

:func:`install` puts this in place in a process (every job process does it first);
:func:`check_problem` applies the up-front checks to a problem's parameter.  This package's
``__init__`` imports nothing: the sandbox imports :mod:`.target` through it.
"""

from __future__ import annotations

from typing import Any


def install() -> None:
    """Make opto's trainable functions run optimizer-written code in the sandbox (idempotent)."""
    from trace_bench.tasks.code_nodes.execution import install as install_execution

    install_execution()


def trainable_code_nodes(param: Any) -> list[tuple[Any, bool]]:
    """Trainable FunModules reachable from a problem's parameter, each with whether it is a method."""
    import sys

    bundle = sys.modules.get("opto.trace.bundle")
    if bundle is None:  # opto was never imported: nothing can hold a code node
        return []
    fun_module = bundle.FunModule
    found: dict[int, tuple[Any, bool]] = {}
    seen: set[int] = set()
    pending: list[tuple[Any, bool, int]] = [(param, False, 0)]
    while pending:
        value, is_method, depth = pending.pop()
        if id(value) in seen or depth > 6:
            continue
        seen.add(id(value))
        if isinstance(value, fun_module):
            if value.parameter is not None:
                found.setdefault(id(value._fun), (value, is_method))
            continue
        if isinstance(value, (list, tuple, set, frozenset)):
            pending.extend((item, False, depth + 1) for item in value)
        elif isinstance(value, dict):
            pending.extend((item, False, depth + 1) for item in value.values())
        elif hasattr(value, "__dict__") and not isinstance(value, type) and type(value).__module__ != "builtins":
            for klass in type(value).__mro__:
                if klass.__module__ not in ("builtins", "abc") and not klass.__module__.startswith("opto."):
                    pending.extend((item, True, depth + 1) for item in vars(klass).values())
            pending.extend((item, False, depth + 1) for item in vars(value).values())
    return list(found.values())


def check_problem(param: Any) -> int:
    """Apply the up-front checks to every trainable code node of ``param``; returns how many there are.

    Raises :class:`~trace_bench.tasks.code_nodes.support.CodeNodeUnsupported` for a node whose
    rewrites could not run in the sandbox, and :class:`trace_bench.sandbox.SandboxUnavailable` when
    no sandbox may run here (a job then fails before it spends anything, saying how to fix it).
    """
    nodes = trainable_code_nodes(param)
    if not nodes:
        return 0
    from trace_bench.tasks.code_nodes.support import context_of

    for module, is_method in nodes:
        context_of(module, bound=is_method)
    install()
    import os

    from trace_bench.sandbox import prepare, prepare_lazily
    from trace_bench.tasks.code_nodes.execution import TARGET_MODULE

    # Refused now where no sandbox may run.  A real job starts it in the background now: its first
    # LLM call hides the start (0.1-0.3 s idle, ~0.7 s at load 8) from the first rewritten call.  A
    # stub job has no such call to hide it behind, and often rewrites nothing (the stub smoke run):
    # its first call of optimizer-written code starts it.
    if os.environ.get("TRACE_BENCH_MODE") == "real":
        prepare(TARGET_MODULE)
    else:
        prepare_lazily(TARGET_MODULE)
    return len(nodes)

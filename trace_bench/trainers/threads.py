"""Make ``opto``'s tracing safe for rollouts in threads (``num_threads > 1``).

Why threaded rollouts failed with ``TraceMissingInputsError``: a ``@bundle`` call records which
nodes its function reads by pushing a set on ``opto.trace.nodes.USED_NODES``, a *process-global*
stack, and every ``node.data`` read adds the node to the top set.  With two rollouts in two
threads, thread A's reads land in the set thread B pushed last; B then finds nodes it never took as
inputs (A's outputs) and raises ``TraceMissingInputsError``, while A misses its own.  The fix gives
each thread its own stack: the module attribute is replaced by an object with the same list
operations (``append``, ``pop``, ``len``, ``[-1]``) over a thread-local list.  Both modules that use
the name (``nodes`` reads it as a global, ``bundle`` imported it) get the same object.

``Graph.register`` names a node by appending it to a per-name list and reading the list's length;
two threads can read the same length and give two nodes one name (optimizers look nodes up by
name), so registration is made atomic with a lock.

:func:`make_opto_thread_safe` is idempotent and cheap; evaluators call it before any rollout.
"""

from __future__ import annotations

import functools
import threading
from typing import Any

_INSTALLED = False
_INSTALL_LOCK = threading.Lock()


class ThreadLocalStack:
    """A stack with the list operations ``opto`` uses on ``USED_NODES``, one stack per thread."""

    def __init__(self) -> None:
        self._local = threading.local()

    def _stack(self) -> list[Any]:
        stack: list[Any] | None = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def append(self, item: Any) -> None:
        self._stack().append(item)

    def pop(self, index: int = -1) -> Any:
        return self._stack().pop(index)

    def __len__(self) -> int:
        return len(self._stack())

    def __getitem__(self, index: int) -> Any:
        return self._stack()[index]

    def __iter__(self) -> Any:
        return iter(list(self._stack()))

    def __bool__(self) -> bool:
        return bool(self._stack())


def make_opto_thread_safe() -> None:
    """Install the thread-local ``USED_NODES`` and the locked ``Graph.register`` (once)."""
    global _INSTALLED
    if _INSTALLED:
        return
    with _INSTALL_LOCK:
        if _INSTALLED:
            return
        import opto.trace.bundle as bundle
        import opto.trace.nodes as nodes

        if not isinstance(nodes.USED_NODES, ThreadLocalStack):
            stack = ThreadLocalStack()
            for item in list(nodes.USED_NODES):  # empty outside a bundle call; kept for this thread
                stack.append(item)
            nodes.USED_NODES = stack
            bundle.USED_NODES = stack
        register = nodes.Graph.register
        if not getattr(register, "_trace_bench_locked", False):
            lock = threading.Lock()

            @functools.wraps(register)
            def locked_register(self: Any, node: Any) -> None:
                with lock:
                    register(self, node)

            locked_register._trace_bench_locked = True  # type: ignore[attr-defined]
            nodes.Graph.register = locked_register
        _INSTALLED = True

"""Whose calls these are: the *phase* and *caller* a session's calls are metered under.

Phases: ``train`` is every call the trainer causes (its optimizer, the agent in its rollouts,
external libraries through the gateway); ``measure`` is the harness scoring states outside the
budget (:meth:`PhaseScopes.measuring`: the test split, and the parameters a stopped trainer left).
The phase follows the calling thread (a context variable, carried into rollout threads), so a
trainer thread calling while another thread measures is still counted as ``train``.  Budgets count
only ``train``.

Selection is charged: the harness scoring a state the trainer reported on the selection split (the
score that picks the best state) runs inside :meth:`PhaseScopes.selecting`, in the ``train`` phase
with the caller ``selection``, so the budget counts and may refuse it like a trainer call
(docs/analysis.md, "Nothing uncounted moves a score").

A call may carry a *caller*: ``evaluator`` for the calls a task's evaluator makes through its
gateway, ``selection`` for the harness's selection scoring.  It changes nothing of the phase or the
budget; the session's totals count such calls again by caller (training-phase ones only), which the
job's record shows as ``eval_*`` and ``selection_*``.

A call that arrives from another thread without a phase (a task's own gateway serving a subprocess)
takes the one the harness's open scopes imply (:meth:`PhaseScopes.ambient_phase`,
:meth:`PhaseScopes.ambient_caller`).
"""

from __future__ import annotations

import contextvars
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_PHASE: contextvars.ContextVar[str | None] = contextvars.ContextVar("trace_bench_llm_phase", default=None)
_CALLER: contextvars.ContextVar[str | None] = contextvars.ContextVar("trace_bench_llm_caller", default=None)
#: the caller of the harness's selection scoring (charged to the budget: results.json ``selection_*``)
SELECTION_CALLER = "selection"


def thread_phase(phase: str | None) -> str:
    """The phase of a call: ``phase`` when the caller names one, else the calling thread's scope."""
    return phase or _PHASE.get() or "train"


def thread_caller(caller: str | None) -> str | None:
    """The caller of a call: ``caller`` when named, else the calling thread's scope (``selection``)."""
    return caller or _CALLER.get()


class PhaseScopes:
    """The harness's scoring scopes of one session; thread-safe."""

    def __init__(self) -> None:
        self._scopes_lock = threading.Lock()
        self._measuring = 0
        self._selecting = 0

    @contextmanager
    def measuring(self) -> Iterator[None]:
        """Calls made inside (in this thread, and in rollout threads it starts) are the harness
        measuring a state: metered under the ``measure`` phase, never counted by the budget."""
        token = _PHASE.set("measure")
        with self._scopes_lock:
            self._measuring += 1
        try:
            yield
        finally:
            _PHASE.reset(token)
            with self._scopes_lock:
                self._measuring -= 1

    @contextmanager
    def selecting(self) -> Iterator[None]:
        """Calls made inside (this thread and the rollout threads it starts) are the harness scoring
        a reported state on the selection split: ``train`` phase, caller ``selection``, charged to
        the budget, which may refuse them (``BudgetExhausted``) like a trainer call."""
        phase, caller = _PHASE.set("train"), _CALLER.set(SELECTION_CALLER)
        with self._scopes_lock:
            self._selecting += 1
        try:
            yield
        finally:
            _CALLER.reset(caller)
            _PHASE.reset(phase)
            with self._scopes_lock:
                self._selecting -= 1

    def ambient_phase(self) -> str:
        """The phase for a call that arrives without one from another thread (a task's own
        gateway serving a subprocess): ``measure`` while any measurement runs, else ``train``."""
        with self._scopes_lock:
            return "measure" if self._measuring else "train"

    def ambient_caller(self) -> str | None:
        """The caller for a call that arrives from another thread (a task's gateway): ``selection``
        while a selection scoring runs and no measurement does, else None."""
        with self._scopes_lock:
            return SELECTION_CALLER if self._selecting and not self._measuring else None

    def harness_scoring(self) -> bool:
        """Whether the harness is scoring a state (selection or measurement), not the trainer."""
        with self._scopes_lock:
            return bool(self._measuring or self._selecting)

"""How a backend tells the job's session about the provider requests inside one call.

One call of the session may be several requests to the provider (retries).  A request the
provider received but never answered usably (the client's timeout, a connection lost after the
request went out, a 200 the client cannot use, a call cancelled while in flight) is billed by the
provider all the same, so the backend reports it as it happens (:meth:`AttemptLedger.charged`)
and the session charges it at once: one estimated call, in the totals, the events, the budget and
the spend journal.  Before it sends the next attempt of such a call, the backend asks
(:meth:`AttemptLedger.retrying`): the retry is a new request, which reserves its worst case again
and may be refused by the budget (:class:`~trace_bench.llm.errors.BudgetExhausted`).

The session attaches its ledger to the calling thread for the duration of the backend's work
(:func:`attached`), so the backend protocol stays ``complete(messages, ...)``.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Protocol

from trace_bench.llm.types import Completion


class AttemptLedger(Protocol):
    def charged(self, attempt: Completion) -> None:
        """An attempt the provider received and never answered usably (``attempt.unanswered``
        says why), with what it is charged."""

    def retrying(self) -> None:
        """The next attempt of a call whose last attempt was charged is about to be sent."""


_LEDGER: contextvars.ContextVar[AttemptLedger | None] = contextvars.ContextVar("trace_bench_attempts", default=None)


def current_ledger() -> AttemptLedger | None:
    return _LEDGER.get()


@contextmanager
def attached(ledger: AttemptLedger) -> Iterator[None]:
    token = _LEDGER.set(ledger)
    try:
        yield
    finally:
        _LEDGER.reset(token)

"""The current job's LLM clients, for task agents that call an LLM inside ``forward``.

Each job runs in its own process, so one process-global session is exactly one job's session;
agents call :func:`get_llm` at call time (never at import or build time) so stub mode, budgets
and metering apply to them like to optimizers.
"""

from __future__ import annotations

from typing import Any

_SESSION: Any = None


def set_session(session: Any) -> None:
    global _SESSION
    _SESSION = session


def get_session() -> Any:
    return _SESSION


def get_llm(role: str = "agent") -> Any:
    """The metered client for ``role`` of the running job (a stub session outside a job)."""
    global _SESSION
    if _SESSION is None:
        from trace_bench.llm.factory import build_session

        _SESSION = build_session(mode="stub", llm={}, budget={}, seed=0)
    return _SESSION.client(role)

"""The metered client: the one object every optimizer, agent and judge calls.

It satisfies both call shapes ``opto`` 0.1.3.8 uses (``llm(messages=...)`` for OptoPrime/OPRO
and ``llm.create(...)`` for OptoPrimeMulti/TextGrad) and returns the attribute-style response
they read.  All accounting goes through the session, so tokens and cost are exact and shared
by every role of a job.
"""

from __future__ import annotations

from typing import Any, Protocol

from trace_bench.llm.types import ChatResponse


class ChatSession(Protocol):
    """What the client needs from a session (``trace_bench.llm.session.LLMSession`` is one)."""

    def chat(self, role: str, messages: list[dict[str, Any]], **params: Any) -> ChatResponse: ...


class MeteredLLM:
    """A callable LLM bound to one job session and one role (optimizer, agent, judge)."""

    def __init__(self, session: ChatSession, role: str, model: str) -> None:
        self.session = session
        self.role = role
        self.model = model
        self.model_name = model

    def __bool__(self) -> bool:  # opto does ``llm or LLM()``: never be falsy
        return True

    def __call__(self, *args: Any, messages: list[dict[str, Any]] | None = None, **params: Any) -> ChatResponse:
        if messages is None and args:
            messages = args[0]
        if messages is None:
            raise TypeError("MeteredLLM needs messages=[...]")
        return self.session.chat(self.role, list(messages), **params)

    create = __call__

    def __repr__(self) -> str:
        return f"MeteredLLM(role={self.role!r}, model={self.model!r})"

    def __deepcopy__(self, memo: dict[int, Any]) -> MeteredLLM:
        # optimizers are deep-copied per candidate; the client must stay shared with the job
        return self

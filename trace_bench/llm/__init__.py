"""LLM layer: metered clients, stub policy, budgets, providers, cache, gateway, fake server.

Every name is loaded on first access, so importing a module of this package (the driver's
``credentials`` and ``preflight``) does not import the session, the stub policy and the clients
that only a job uses, nor ``http.server`` for ``FakeLLMServer``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from trace_bench._util.lazy import exports

if TYPE_CHECKING:
    from trace_bench.llm.budget import Budget
    from trace_bench.llm.client import MeteredLLM
    from trace_bench.llm.errors import BudgetExhausted, LLMError
    from trace_bench.llm.fake_server import FakeLLMServer
    from trace_bench.llm.names import openai_compatible_model_name
    from trace_bench.llm.session import LLMSession, UsageTotals
    from trace_bench.llm.stub import StubPolicy

_EXPORTS = {
    "Budget": "trace_bench.llm.budget", "MeteredLLM": "trace_bench.llm.client",
    "BudgetExhausted": "trace_bench.llm.errors", "LLMError": "trace_bench.llm.errors",
    "FakeLLMServer": "trace_bench.llm.fake_server", "openai_compatible_model_name": "trace_bench.llm.names",
    "LLMSession": "trace_bench.llm.session", "UsageTotals": "trace_bench.llm.session",
    "StubPolicy": "trace_bench.llm.stub",
}

__all__ = ["Budget", "BudgetExhausted", "FakeLLMServer", "LLMError", "LLMSession", "MeteredLLM",
           "StubPolicy", "UsageTotals", "openai_compatible_model_name"]

__getattr__ = exports(__name__, _EXPORTS)

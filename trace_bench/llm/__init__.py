"""LLM layer: metered clients, stub policy, budgets, providers, cache, gateway, fake server.

``FakeLLMServer`` is loaded on first access (it brings ``http.server``), so importing this
package stays as cheap as its eager names.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from trace_bench.llm.budget import Budget, Spent
from trace_bench.llm.client import MeteredLLM
from trace_bench.llm.errors import BudgetExhausted, LLMError
from trace_bench.llm.names import openai_compatible_model_name
from trace_bench.llm.session import LLMSession, UsageTotals
from trace_bench.llm.stub import StubPolicy

if TYPE_CHECKING:
    from trace_bench.llm.fake_server import FakeLLMServer

__all__ = ["Budget", "BudgetExhausted", "FakeLLMServer", "LLMError", "LLMSession", "MeteredLLM", "Spent",
           "StubPolicy", "UsageTotals", "openai_compatible_model_name"]


def __getattr__(name: str) -> Any:
    if name == "FakeLLMServer":
        from trace_bench.llm.fake_server import FakeLLMServer

        return FakeLLMServer
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

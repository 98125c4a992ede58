"""LLM layer: metered clients, stub policy, budgets, providers, cache, gateway."""

from __future__ import annotations

from trace_bench.llm.budget import Budget, Spent
from trace_bench.llm.client import MeteredLLM
from trace_bench.llm.errors import BudgetExhausted, LLMError
from trace_bench.llm.names import openai_compatible_model_name
from trace_bench.llm.session import LLMSession, UsageTotals
from trace_bench.llm.stub import StubPolicy

__all__ = ["Budget", "BudgetExhausted", "LLMError", "LLMSession", "MeteredLLM", "Spent", "StubPolicy", "UsageTotals",
           "openai_compatible_model_name"]

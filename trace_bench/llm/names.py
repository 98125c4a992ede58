"""Model-name spellings (no imports: ``trace_bench.llm`` re-exports this cheaply)."""

from __future__ import annotations

OPENROUTER_PREFIX = "openrouter/"


def openai_compatible_model_name(model: str) -> str:
    """The name an OpenAI-compatible endpoint expects for a LiteLLM model string: OpenRouter's
    endpoint takes ``openai/gpt-4o-mini``, not LiteLLM's ``openrouter/openai/gpt-4o-mini``.
    (The original Trace-Bench's ``trace_bench.llm.openai_compatible_model_name``.)"""
    if not isinstance(model, str):
        raise TypeError(f"model must be a string, got {type(model).__name__}")
    return model.removeprefix(OPENROUTER_PREFIX)

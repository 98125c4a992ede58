"""USD cost of a call: config prices first, then LiteLLM's bundled (local) price map."""

from __future__ import annotations

from typing import Any


def cost_of(model: str, prompt_tokens: int, completion_tokens: int,
            prices: dict[str, Any] | None = None) -> float | None:
    """Cost in USD, or None when the model's price is unknown."""
    for name in (model, model.split("/", 1)[-1]):
        price = (prices or {}).get(name)
        if price:
            return (prompt_tokens * float(price["input_per_mtok"]) + completion_tokens * float(price["output_per_mtok"])) / 1e6
    try:
        import litellm

        prompt_cost, completion_cost = litellm.cost_per_token(model=model, prompt_tokens=prompt_tokens,
                                                              completion_tokens=completion_tokens)
        return float(prompt_cost) + float(completion_cost)
    except Exception:  # unknown model or price map entry
        return None

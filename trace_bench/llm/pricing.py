"""USD cost of a call: config prices first, then LiteLLM's bundled (local) price map."""

from __future__ import annotations

from typing import Any


def configured_price(model: str, prices: dict[str, Any] | None) -> dict[str, Any] | None:
    """The config's price of ``model`` (``llm.prices``, by its name with or without the provider
    prefix), which :func:`cost_of` uses before LiteLLM's map; None when the config has none."""
    for name in (model, model.split("/", 1)[-1]):
        price = (prices or {}).get(name)
        if price:
            return dict(price)
    return None


def cost_of(model: str, prompt_tokens: int, completion_tokens: int,
            prices: dict[str, Any] | None = None) -> float | None:
    """Cost in USD, or None when the model's price is unknown."""
    price = configured_price(model, prices)
    if price is not None:
        return (prompt_tokens * float(price["input_per_mtok"]) + completion_tokens * float(price["output_per_mtok"])) / 1e6
    try:
        import litellm

        prompt_cost, completion_cost = litellm.cost_per_token(model=model, prompt_tokens=prompt_tokens,
                                                              completion_tokens=completion_tokens)
        return float(prompt_cost) + float(completion_cost)
    except Exception:  # unknown model or price map entry
        return None


def unit_prices(model: str, prices: dict[str, Any] | None = None) -> tuple[float, float] | None:
    """USD per prompt token and per completion token (None: unknown price): the cost of a
    million of each, so tiered prices read as their first tier.  For estimates only."""
    per_input = cost_of(model, 1_000_000, 0, prices)
    per_output = cost_of(model, 0, 1_000_000, prices)
    if per_input is None or per_output is None:
        return None
    return per_input / 1e6, per_output / 1e6

"""Where a metered call is finally answered: the stub policy or a real provider.

A backend turns one request into a :class:`~trace_bench.llm.types.Completion` carrying exact
usage.  Metering, budgets, caching and retries live around it (in the client), so every
backend gets them for free.
"""

from __future__ import annotations

from typing import Any, Protocol

from trace_bench.llm.stub import StubPolicy
from trace_bench.llm.tokens import estimate_prompt_tokens, estimate_text_tokens
from trace_bench.llm.types import Completion, Usage


class Backend(Protocol):
    model: str

    def complete(self, messages: list[dict[str, Any]], *, n: int, sample_index: int, **params: Any) -> Completion:
        ...


class StubBackend:
    """Answers with the stub policy; usage is counted as a provider would (no estimate flag)."""

    def __init__(self, policy: StubPolicy, model: str = "stub") -> None:
        self.policy = policy
        self.model = model

    def prompt_bound(self, messages: list[dict[str, Any]]) -> int:
        """The stub's own count of the prompt, which is exactly what it charges."""
        return estimate_prompt_tokens(messages)

    def complete(self, messages: list[dict[str, Any]], *, n: int = 1, sample_index: int = 0, **params: Any) -> Completion:
        texts = [self.policy.respond(messages, sample_index=sample_index + i, **params)
                 for i in range(max(1, n))]
        prompt = estimate_prompt_tokens(messages)
        completion = sum(estimate_text_tokens(t) for t in texts)
        return Completion(
            texts=texts,
            usage=Usage(prompt_tokens=prompt, completion_tokens=completion, total_tokens=prompt + completion),
            model=self.model,
            cost_usd=0.0,
        )

"""Token counts the harness makes itself: estimates and upper bounds.

Two kinds, for two uses:

- :func:`estimate_prompt_tokens` / :func:`estimate_text_tokens`: about four characters per token,
  the usual rule of thumb for English BPE vocabularies.  The stub policy and the fake server count
  their own usage this way (it is their "tokenizer").
- :func:`prompt_token_bound` / :func:`text_token_bound`: never below what a provider counts.  What
  the harness charges without the provider's usage (a call cut off in flight, timed out or answered
  unusably) and what a call reserves against a budget before it is sent use these, so a charge is
  never below the provider's bill and a budget is never crossed by it.  With the model's own
  tokenizer (:mod:`trace_bench.llm.tokenizers`) a bound is its count plus the chat format's
  overhead; without one it is the text's UTF-8 length in bytes plus that overhead: a byte-level
  BPE vocabulary (GPT, Llama 3, Qwen, Mistral's Tekken) or a SentencePiece one with byte fallback
  (Llama 2, Mistral) never makes more tokens than bytes.  So a bound over-counts English about
  fourfold without a tokenizer; docs/llm.md says what that costs.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable
from typing import Any

#: tokens a chat template may add per message beyond its text (role markers, separators): 3-4 for
#: OpenAI's models, 5 for Llama 3 and ChatML (Qwen), with room to spare
MESSAGE_OVERHEAD = 8
#: tokens a template may add once per request (the reply's priming, a default system prompt)
REQUEST_OVERHEAD = 32

TokenCounter = Callable[[str], int]


def estimate_text_tokens(text: str) -> int:
    """About four characters per token, the usual rule of thumb for English BPE vocabularies."""
    return max(1, math.ceil(len(text) / 4)) if text else 0


def message_text(messages: Iterable[dict[str, Any]]) -> str:
    parts = []
    for message in messages:
        parts.append(f"{message.get('role', '')}: {_content(message)}")
    return "\n".join(parts)


def _content(message: dict[str, Any]) -> str:
    content = message.get("content", "")
    if isinstance(content, list):  # multimodal content parts
        content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return "" if content is None else str(content)


def estimate_prompt_tokens(messages: Iterable[dict[str, Any]]) -> int:
    messages = list(messages)
    # ~4 tokens of chat-format overhead per message, as OpenAI documents for its chat models
    return estimate_text_tokens(message_text(messages)) + 4 * len(messages)


def text_token_bound(text: str, count: TokenCounter | None = None) -> int:
    """At least as many tokens as any tokenizer makes of ``text`` (its count with ``count``)."""
    if not text:
        return 0
    return count(text) if count is not None else len(text.encode("utf-8", "replace"))


def prompt_token_bound(messages: Iterable[dict[str, Any]], count: TokenCounter | None = None) -> int:
    """At least what a provider counts as the prompt of ``messages`` (see the module docstring):
    each message's text (its content, name and tool calls) by ``count`` or in bytes, plus
    :data:`MESSAGE_OVERHEAD` per message and :data:`REQUEST_OVERHEAD` once.  Images and other
    non-text parts are not counted."""
    total = REQUEST_OVERHEAD
    for message in messages:
        total += MESSAGE_OVERHEAD + text_token_bound(_content(message), count)
        for extra in ("name", "tool_calls", "function_call"):
            value = message.get(extra)
            if value:
                text = value if isinstance(value, str) else json.dumps(value, default=str)
                total += text_token_bound(text, count)
    return total

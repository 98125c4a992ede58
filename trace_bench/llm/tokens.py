"""Token estimates, used only when a provider reports no usage (flagged ``estimated``)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any


def estimate_text_tokens(text: str) -> int:
    """About four characters per token, the usual rule of thumb for English BPE vocabularies."""
    return max(1, math.ceil(len(text) / 4)) if text else 0


def message_text(messages: Iterable[dict[str, Any]]) -> str:
    parts = []
    for message in messages:
        content = message.get("content", "")
        if isinstance(content, list):  # multimodal content parts
            content = " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
        parts.append(f"{message.get('role', '')}: {content}")
    return "\n".join(parts)


def estimate_prompt_tokens(messages: Iterable[dict[str, Any]]) -> int:
    messages = list(messages)
    # ~4 tokens of chat-format overhead per message, as OpenAI documents for its chat models
    return estimate_text_tokens(message_text(messages)) + 4 * len(messages)

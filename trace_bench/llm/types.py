"""Response objects in the shape ``opto`` optimizers read.

``opto`` reads ``response.choices[i].message.content`` by attribute, so plain dicts do not
work; these small dataclasses mirror the OpenAI chat-completion shape without importing
``openai`` or ``litellm``.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass
class Message:
    content: str
    role: str = "assistant"


@dataclass
class Choice:
    message: Message
    index: int = 0
    finish_reason: str = "stop"


@dataclass
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0


@dataclass
class ChatResponse:
    choices: list[Choice]
    usage: Usage = field(default_factory=Usage)
    model: str = ""
    id: str = ""

    @classmethod
    def from_texts(cls, texts: list[str], usage: Usage, model: str, response_id: str = "") -> ChatResponse:
        return cls(
            choices=[Choice(message=Message(content=t), index=i) for i, t in enumerate(texts)],
            usage=usage,
            model=model,
            id=response_id,
        )

    def model_dump(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Completion:
    """What a backend returns for one request: texts, exact usage, and whether usage was estimated.

    ``unanswered``: set (to why: ``timed_out``, ``connection_lost``, ``unusable``, ``cancelled``,
    ``cut_off``) on the charge of a request the provider received and never answered usably; its
    texts are empty and its usage an estimate (:mod:`trace_bench.llm.attempts`)."""

    texts: list[str]
    usage: Usage
    model: str
    estimated: bool = False
    cached: bool = False
    retries: int = 0
    cost_usd: float | None = None
    unanswered: str | None = None

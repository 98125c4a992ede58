"""The LLM roles, and which model a role really calls: the one rule shared by job identity and the
providers.

A config may leave the model out; then the original's environment variables decide, in this order:
``TRACE_CUSTOMLLM_MODEL`` (only with ``TRACE_DEFAULT_LLM_BACKEND=CustomLLM``), ``TRACE_LITELLM_MODEL``,
``DEFAULT_LITELLM_MODEL``, else ``gpt-4o``.  Job ids hash the result, so two runs that call different
models never share a job id, whatever backend picked the model.
"""

from __future__ import annotations

import os
from typing import Literal, get_args

DEFAULT_MODEL = "gpt-4o"
#: an LLM role a job may call, each with its own model, budget share and usage columns
Role = Literal["optimizer", "agent", "judge"]
#: the roles, in order (declared here only)
ROLES: tuple[Role, ...] = get_args(Role)


def custom_backend() -> bool:
    """``TRACE_DEFAULT_LLM_BACKEND=CustomLLM``: opto's env-configured OpenAI-compatible endpoint."""
    return os.environ.get("TRACE_DEFAULT_LLM_BACKEND", "").lower() == "customllm"


def configured_model(model: str | None) -> str:
    """The model name a role calls before provider routing (``openrouter/``, ``openai/`` prefixes)."""
    custom = os.environ.get("TRACE_CUSTOMLLM_MODEL") if custom_backend() else None
    return (model or custom or os.environ.get("TRACE_LITELLM_MODEL") or os.environ.get("DEFAULT_LITELLM_MODEL")
            or DEFAULT_MODEL)


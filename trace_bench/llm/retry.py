"""One retry policy for every provider call: exponential backoff with full jitter, Retry-After honoured.

Provider exceptions (LiteLLM, OpenAI, httpx) are mapped to the typed errors of
:mod:`trace_bench.llm.errors`; their ``retryable`` flag is the only rule the loop consults.
"""

from __future__ import annotations

import email.utils
import random
import time
from collections.abc import Callable
from typing import Any, TypeVar

from trace_bench.llm.errors import (
    AuthenticationError,
    BadRequestError,
    LLMConnectionError,
    LLMError,
    LLMTimeoutError,
    MalformedResponseError,
    RateLimitError,
    ServerError,
)
from trace_bench.store.masking import mask_secrets

T = TypeVar("T")


def _retry_after(exc: BaseException) -> float | None:
    headers: Any = None
    for holder in (exc, getattr(exc, "response", None)):
        headers = getattr(holder, "headers", None) or getattr(holder, "litellm_response_headers", None)
        if headers:
            break
    if not headers:
        return None
    try:
        value = headers.get("retry-after") or headers.get("Retry-After")
    except AttributeError:
        return None
    if value is None:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        parsed = email.utils.parsedate_to_datetime(value)
        return max(0.0, parsed.timestamp() - time.time()) if parsed else None


def classify(exc: BaseException) -> LLMError:
    """The typed error for a provider exception (secrets masked in the message)."""
    if isinstance(exc, LLMError):
        return exc
    name = type(exc).__name__.lower()
    status = getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)
    message = mask_secrets(f"{type(exc).__name__}: {exc}")[:500]
    retry_after = _retry_after(exc)
    if status == 429 or "ratelimit" in name:
        return RateLimitError(message, status=429, retry_after=retry_after)
    lowered = message.lower()
    if status in (401, 403) or "authentication" in name or "permissiondenied" in name \
            or "missing credentials" in lowered or "api key" in lowered and "invalid" in lowered:
        return AuthenticationError(message, status=status)
    if "timeout" in name or status in (408, 504):
        return LLMTimeoutError(message, status=status)
    if isinstance(status, int) and status >= 500 or "internalserver" in name or "serviceunavailable" in name:
        return ServerError(message, status=status, retry_after=retry_after)
    if "connection" in name or isinstance(exc, (ConnectionError, OSError)):
        return LLMConnectionError(message, status=status)
    if "json" in name or "decode" in name or "malformed" in name:
        return MalformedResponseError(message, status=status)
    if status in (400, 404, 413, 422) or "badrequest" in name or "notfound" in name:
        return BadRequestError(message, status=status)
    if "apierror" in name or "apiconnection" in name:
        return ServerError(message, status=status)
    return BadRequestError(message, status=status)


def call_with_retries(call: Callable[[], T], *, max_retries: int, base_delay: float = 0.5, max_delay: float = 30.0,
                      rng: random.Random | None = None,
                      on_retry: Callable[[LLMError, int, float], None] | None = None) -> tuple[T, int]:
    """``(result, retries used)``; raises the last typed error when retries are exhausted."""
    rng = rng or random.Random()
    attempt = 0
    while True:
        try:
            return call(), attempt
        except Exception as raw:  # noqa: BLE001 - every provider error is classified
            error = classify(raw)
            error.retries = attempt  # type: ignore[attr-defined]
            if not error.retryable or attempt >= max_retries:
                raise error from None
            delay = rng.uniform(0, min(max_delay, base_delay * 2**attempt))
            if error.retry_after is not None:
                delay = max(delay, min(error.retry_after, max_delay))
            if on_retry is not None:
                on_retry(error, attempt + 1, delay)
            time.sleep(delay)
            attempt += 1

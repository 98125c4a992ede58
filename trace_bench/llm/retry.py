"""One retry policy for every provider call: exponential backoff with full jitter, Retry-After honoured.

Provider exceptions (LiteLLM, OpenAI, httpx) are mapped to the typed errors of
:mod:`trace_bench.llm.errors`; their ``retryable`` flag is the only rule the loop consults.

A request the client gave up on (its timeout) is not gone: the server received it and goes on
generating (llama.cpp for up to its ``max_tokens``, 9 s after a 2 s timeout in one measurement), so
a retry sent at once queues behind the abandoned work and times out in turn.  After the k-th
consecutive client-side timeout the wait is at least ``timeout_s * 2**(k-1)`` (capped at
:data:`MAX_ORPHAN_WAIT_S`), and it is spent holding the run's concurrency slot
(``llm.max_concurrency``): for the server the abandoned request is still in flight.
"""

from __future__ import annotations

import email.utils
import random
import re
import time
from collections.abc import Callable
from contextlib import AbstractContextManager as ContextManager
from contextlib import nullcontext
from typing import Any, TypeVar

from trace_bench._util.masking import mask_secrets
from trace_bench.llm.errors import (
    AuthenticationError,
    BadRequestError,
    LLMConnectionError,
    LLMError,
    LLMTimeoutError,
    MalformedResponseError,
    QuotaExhaustedError,
    RateLimitError,
    ServerError,
)

T = TypeVar("T")
#: the longest wait after a client-side timeout (see the module docstring)
MAX_ORPHAN_WAIT_S = 120.0
#: exceptions (by class name, anywhere in a chain) that mean the request never left this machine
_NEVER_SENT = ("ConnectError", "ConnectTimeout", "PoolTimeout", "ConnectionRefusedError", "gaierror",
               "NameResolutionError", "UnsupportedProtocol", "InvalidURL")
#: how providers say a quota is spent for good (OpenAI's error code, its message, others' words)
_PERMANENT_QUOTA = ("insufficient_quota", "exceeded your current quota", "insufficient credits",
                    "credit balance is too low")


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


# "litellm.AuthenticationError: AuthenticationError: OpenAIException - " and the like: class names a
# library puts before the provider's own words
_CLASS_PREFIX = re.compile(r"^\s*(?:[\w.]*(?:Error|Exception)\s*(?::|-)\s*)+")
_LIMIT = 2000


def _body_message(body: Any) -> str | None:
    """The provider's message in an OpenAI-style error body (``{"error": {"message": ...}}``)."""
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and isinstance(inner.get("message"), str) and inner["message"].strip():
            return inner["message"].strip()
        if isinstance(inner, str) and inner.strip():
            return inner.strip()
    return None


def _bounded(text: str) -> str:
    """One line, whole up to a few KB (an HTML error page is not): longer ones keep both ends."""
    flat = " ".join(text.split())
    if len(flat) <= _LIMIT:
        return flat
    return f"{flat[:_LIMIT * 2 // 3]} … {flat[-_LIMIT // 3:]}"


def provider_message(exc: BaseException, status: int | None = None) -> str:
    """What went wrong, once: the HTTP status and the provider's own message, without the class
    names libraries stack in front of it ("AuthenticationError: AuthenticationError: Error code:
    401 - {...}" reads "HTTP 401: invalid api key"); for a failed connection, its cause."""
    message = _body_message(getattr(exc, "body", None))
    if message is None:
        message = _CLASS_PREFIX.sub("", str(exc)).strip()
        if status is not None:
            message = re.sub(rf"^Error code:\s*{status}\s*-\s*", "", message)
    cause = exc.__cause__ or exc.__context__
    if cause is not None and status is None and str(cause) and str(cause) not in message:
        message = f"{message.rstrip('.')}: {_CLASS_PREFIX.sub('', str(cause)).strip()}"
    if not message:
        message = type(exc).__name__
    return _bounded(f"HTTP {status}: {message}" if status is not None else message)


def classify(exc: BaseException) -> LLMError:
    """The typed error for a provider exception (secrets masked in the message, which names the
    HTTP status and the provider's words once, see :func:`provider_message`)."""
    if isinstance(exc, LLMError):
        return exc
    name = type(exc).__name__.lower()
    status = getattr(exc, "status_code", None) or getattr(getattr(exc, "response", None), "status_code", None)
    if not isinstance(status, int):
        status = None
    if status == 500 and "connection error" in str(exc).lower():
        status = None  # LiteLLM reports a failed connection as a 500 nobody answered
        return LLMConnectionError(mask_secrets(provider_message(exc, status)))
    message = mask_secrets(provider_message(exc, status))
    retry_after = _retry_after(exc)
    if status == 402:  # payment required: OpenRouter's "insufficient credits"
        return QuotaExhaustedError(message, status=402)
    if status == 429 or "ratelimit" in name:
        if _permanent_quota(exc, message):
            return QuotaExhaustedError(message, status=429)
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


def _permanent_quota(exc: BaseException, message: str) -> bool:
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else None
    codes = [str(inner.get(key) or "") for key in ("code", "type")] if isinstance(inner, dict) else []
    text = " ".join([message, *codes]).lower()
    return any(marker in text for marker in _PERMANENT_QUOTA)


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    current: BaseException | None = exc
    while current is not None and current not in seen and len(seen) < 12:
        seen.append(current)
        current = current.__cause__ or current.__context__
    return seen


def reached_provider(exc: BaseException) -> bool:
    """Whether a failed attempt's request reached the provider with no answer back: a client-side
    timeout or a connection lost after the request was sent (the provider bills those), not a
    connection that never opened."""
    error = classify(exc)
    if not isinstance(error, (LLMTimeoutError, LLMConnectionError)) or error.status is not None:
        return False  # an answer came: an HTTP status is the provider's (or its proxy's) own
    return not any(type(link).__name__ in _NEVER_SENT or isinstance(link, ConnectionRefusedError)
                   for link in _chain(exc))


def orphan_wait(timeouts: int, timeout_s: float | None) -> float:
    """The least wait before retrying after ``timeouts`` consecutive client-side timeouts."""
    if not timeouts or not timeout_s:
        return 0.0
    return min(MAX_ORPHAN_WAIT_S, float(timeout_s) * float(2 ** (timeouts - 1)))


def call_with_retries(call: Callable[[], T], *, max_retries: int, base_delay: float = 0.5, max_delay: float = 30.0,
                      rng: random.Random | None = None,
                      on_retry: Callable[[LLMError, int, float], None] | None = None,
                      timeout_s: float | None = None, hold: Callable[[], ContextManager[Any]] = nullcontext,
                      sleep: Callable[[float], None] | None = None) -> tuple[T, int]:
    """``(result, retries used)``; raises the last typed error when retries are exhausted.

    ``timeout_s``: the client's timeout, which spaces the retries after client-side timeouts (see
    the module docstring); such a wait is spent inside ``hold()`` (the concurrency slot)."""
    rng = rng or random.Random()
    sleep = sleep or time.sleep
    attempt = 0
    timeouts = 0
    while True:
        try:
            return call(), attempt
        except Exception as raw:  # noqa: BLE001 - every provider error is classified
            error = classify(raw)
            error.retries = attempt  # type: ignore[attr-defined]
            if not error.retryable or attempt >= max_retries:
                raise error from None
            client_timeout = isinstance(error, LLMTimeoutError) and error.status is None
            timeouts = timeouts + 1 if client_timeout else 0
            delay = rng.uniform(0, min(max_delay, base_delay * 2**attempt))
            if error.retry_after is not None:
                delay = max(delay, min(error.retry_after, max_delay))
            orphan = orphan_wait(timeouts, timeout_s)
            if on_retry is not None:
                on_retry(error, attempt + 1, max(delay, orphan))
            if orphan > 0:
                with hold():
                    sleep(orphan)
            if delay > orphan:
                sleep(delay - orphan)
            attempt += 1

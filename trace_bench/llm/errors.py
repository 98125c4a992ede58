"""Typed LLM errors with one retryability rule."""

from __future__ import annotations


class LLMError(Exception):
    """A failed LLM call. ``retryable`` is the single rule the retry loop consults."""

    retryable: bool = False

    def __init__(self, message: str, *, status: int | None = None, retry_after: float | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after


class RateLimitError(LLMError):
    retryable = True


class ServerError(LLMError):
    retryable = True


class LLMTimeoutError(LLMError):
    retryable = True


class LLMConnectionError(LLMError):
    retryable = True


class MalformedResponseError(LLMError):
    """The provider answered, but not with a usable chat completion."""

    retryable = True


class AuthenticationError(LLMError):
    retryable = False


class BadRequestError(LLMError):
    retryable = False


class CacheMissError(LLMError):
    """``llm.cache: replay`` found no recorded answer for a request."""

    retryable = False


class BudgetExhausted(BaseException):  # noqa: N818 - a stop signal, not an error
    """The job's budget is spent.

    A ``BaseException`` on purpose: ``opto`` optimizers wrap LLM calls in ``except Exception``
    (OptoPrimeMulti swallows errors), which would turn a budget stop into a silent retry loop.
    Trainers and the job body catch it explicitly.
    """

    def __init__(self, resource: str, limit: float, spent: float) -> None:
        super().__init__(f"budget exhausted: {resource} {spent:g} >= {limit:g}")
        self.resource = resource
        self.limit = limit
        self.spent = spent

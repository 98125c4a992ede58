"""Typed LLM errors with one retryability rule."""

from __future__ import annotations

from trace_bench._util.errors import TraceBenchError


class LLMError(TraceBenchError):
    """A failed LLM call. ``retryable`` is the single rule the retry loop consults; ``key_refused``
    marks the errors that no later call with the same key can escape (a refused key, a spent quota):
    the run stops scheduling jobs after the first job that met one."""

    retryable: bool = False
    key_refused: bool = False

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
    """401/403: the provider refused the key."""

    retryable = False
    key_refused = True


class QuotaExhaustedError(LLMError):
    """A 429 the provider marks permanent (OpenAI's ``insufficient_quota``: the account's credit or
    quota is spent); waiting does not help, unlike a rate limit."""

    retryable = False
    key_refused = True


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

    def __init__(self, resource: str, limit: float, spent: float, needed: float = 0.0) -> None:
        super().__init__(budget_text(resource, limit, spent, needed))
        self.resource = resource
        self.limit = limit
        self.spent = spent
        self.needed = needed


def budget_text(resource: str, limit: float, spent: float, needed: float = 0.0) -> str:
    """``budget exhausted: tokens 2324 >= 2500`` or, for a call refused for its worst case,
    ``budget exhausted: tokens 2324 + 1110 (the next call's worst case) > 2500``."""
    if needed and spent < limit:
        return f"budget exhausted: {resource} {spent:g} + {needed:g} (the next call's worst case) > {limit:g}"
    return f"budget exhausted: {resource} {spent:g} >= {limit:g}"

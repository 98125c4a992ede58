"""Real providers through LiteLLM: any LiteLLM model string, OpenAI, OpenRouter, or any
OpenAI-compatible ``base_url`` (vLLM, Ollama, llama.cpp).

Each role (optimizer, agent, judge) gets an explicit backend object: model, key and endpoint are
passed per call, never through ``os.environ`` or LiteLLM globals, so concurrent jobs cannot leak
settings into each other.  The original Trace-Bench environment variables keep working as fallbacks.

Every function here reads the typed ``llm`` block (:class:`~trace_bench.config.models.LLMConfig`,
what a job's specification holds); one given as a mapping (the block as JSON) is validated first.
"""

from __future__ import annotations

import os
import random
import re
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from trace_bench.config.model_names import ROLES, configured_model, custom_backend
from trace_bench.config.models import LLMConfig, RoleConfig
from trace_bench.llm.attempts import AttemptLedger, current_ledger
from trace_bench.llm.budget import Budget
from trace_bench.llm.caps import capped, completion_limit
from trace_bench.llm.errors import LLMTimeoutError, MalformedResponseError
from trace_bench.llm.limiter import limited
from trace_bench.llm.names import openai_compatible_model_name
from trace_bench.llm.pricing import configured_price, cost_of, unit_prices
from trace_bench.llm.retry import call_with_retries, classify, reached_provider
from trace_bench.llm.session import EventSink, LLMSession
from trace_bench.llm.tokens import prompt_token_bound, text_token_bound
from trace_bench.llm.types import Completion, Usage

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")  # never fetch LiteLLM's price map online
_COMPLETION_TOKEN_MODELS = re.compile(r"(^|/)(gpt-5|o1|o3|o4)")


_custom_backend = custom_backend
_UNSET: Any = object()
_SSL_CONTEXT: Any = None


def shared_ssl_context() -> Any:
    """One verified TLS context per process: loading the CA bundle costs about 30 ms, which every
    job's first call paid.  A real run's job template makes it (:mod:`trace_bench.llm.preload`),
    and every client of every job forked from it reuses it."""
    global _SSL_CONTEXT
    if _SSL_CONTEXT is None:
        import httpx

        _SSL_CONTEXT = httpx.create_ssl_context()
    return _SSL_CONTEXT


def resolve_model(model: str | None, provider: str | None, base_url: str | None) -> str:
    name = configured_model(model)
    if provider == "openrouter" and not name.startswith("openrouter/"):
        return f"openrouter/{name}"
    if base_url and "/" not in name:
        return f"openai/{name}"  # an OpenAI-compatible server: route through LiteLLM's openai client
    return name


def resolve_key(api_key_env: str | None, provider: str | None) -> str | None:
    if api_key_env:
        return os.environ.get(api_key_env)
    if _custom_backend() and os.environ.get("TRACE_CUSTOMLLM_API_KEY"):
        return os.environ.get("TRACE_CUSTOMLLM_API_KEY")
    if provider == "openrouter":
        return os.environ.get("OPENROUTER_API_KEY") or os.environ.get("OPENAI_API_KEY")
    return os.environ.get("OPENAI_API_KEY")


def key_variable(api_key_env: str | None, provider: str | None) -> str:
    """The variable :func:`~trace_bench.llm.providers.resolve_key` reads first, for the message."""
    if api_key_env:
        return api_key_env
    if custom_backend():
        return "TRACE_CUSTOMLLM_API_KEY (or OPENAI_API_KEY)"
    if provider == "openrouter":
        return "OPENROUTER_API_KEY (or OPENAI_API_KEY)"
    return "OPENAI_API_KEY"


def resolve_base_url(base_url: str | None, provider: str | None) -> str | None:
    if base_url:
        return base_url
    if provider in (None, "openai", "openrouter", "custom"):
        custom = os.environ.get("TRACE_CUSTOMLLM_URL") if _custom_backend() else None
        return custom or os.environ.get("OPENAI_API_BASE") or os.environ.get("OPENAI_BASE_URL") or None
    return None


def token_count(value: Any) -> int | None:
    """A ``usage`` field as the API defines it, a non-negative integer; None for anything else
    (a string, null, a negative or fractional number): the call's usage is then estimated."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if value >= 0 else None
    if isinstance(value, float) and value.is_integer() and value >= 0:
        return int(value)
    return None


class LiteLLMBackend:
    """Calls ``litellm.completion`` with explicit settings; exact usage, cost, typed retries."""

    def __init__(self, *, model: str, api_key: str | None, base_url: str | None, temperature: float | None,
                 max_tokens: int | None, timeout_s: float, max_retries: int, prices: dict[str, Any],
                 seed: int = 0, provider: str | None = None, key_variable: str = "") -> None:
        self.model = model
        self.provider = provider
        #: the variable the key came from (named when the provider refuses it; never the key)
        self.key_variable = key_variable
        self._counter: Any = _UNSET
        self._api_key = api_key
        self.base_url = base_url
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.timeout_s = timeout_s
        self.max_retries = max_retries
        self.prices = prices
        self.rng = random.Random(seed)
        self._unit_prices: Any = _UNSET

    def __repr__(self) -> str:  # never show the key
        return f"LiteLLMBackend(model={self.model!r}, base_url={self.base_url!r})"

    def estimate_cost(self, prompt_tokens: int, completion_tokens: int) -> float | None:
        """What a call of this size would cost (None: unknown price), for a call cut off in flight;
        from per-token prices looked up once per backend (a call's own cost stays exact)."""
        if self._unit_prices is _UNSET:
            self._unit_prices = unit_prices(self.model, self.prices)
        if self._unit_prices is None:
            return None
        per_input, per_output = self._unit_prices
        return prompt_tokens * per_input + completion_tokens * per_output

    def _request(self, messages: list[dict[str, Any]], n: int, params: dict[str, Any]) -> dict[str, Any]:
        request = capped(params, self.max_tokens)  # the config's max_tokens bounds the caller's
        if self.temperature is not None:
            request.setdefault("temperature", self.temperature)
        if _COMPLETION_TOKEN_MODELS.search(self.model) and "max_tokens" in request:
            limit = request.pop("max_tokens")
            request["max_completion_tokens"] = min(limit, request.get("max_completion_tokens") or limit)
        if n > 1:
            request["n"] = n
        request.update(model=self.model, messages=messages, timeout=self.timeout_s, num_retries=0)
        if self._api_key:
            request["api_key"] = self._api_key
        elif self.base_url:
            request["api_key"] = "no-key"  # local OpenAI-compatible servers (vLLM, Ollama) need none
        if self.base_url:
            request["api_base"] = self.base_url
        return request

    def prompt_bound(self, messages: list[dict[str, Any]]) -> int:
        """At least the provider's count of the prompt: the model's tokenizer where one is at hand
        (:mod:`trace_bench.llm.tokenizers`), else the byte bound (:mod:`trace_bench.llm.tokens`)."""
        if self._counter is _UNSET:
            from trace_bench.llm.tokenizers import tokenizer_for

            self._counter = tokenizer_for(self.model, self.base_url, self.provider)
        return prompt_token_bound(messages, self._counter)

    def complete(self, messages: list[dict[str, Any]], *, n: int = 1, sample_index: int = 0, **params: Any) -> Completion:
        import litellm

        request = self._request(messages, n, params)
        return self._attempts(messages, request, lambda: litellm.completion(**request))

    def _attempts(self, messages: list[dict[str, Any]], request: dict[str, Any], send: Any) -> Completion:
        """``send()`` with retries.  An attempt the provider received and never answered usably (a
        client-side timeout, a connection lost after sending, a 200 the client cannot use, a call
        cancelled in flight) is billed: it is reported to the session's ledger
        (:mod:`trace_bench.llm.attempts`) as it happens, charged like a call cut off in flight
        (:meth:`_unanswered_charge`), and its retry asks the ledger first (the budget may refuse it)."""
        ledger = current_ledger()
        charged = False

        def call() -> Any:
            nonlocal charged
            if charged and ledger is not None:
                ledger.retrying()
            charged = False
            try:
                with limited():
                    response = send()
            except Exception as exc:
                reason = _unanswered_reason(exc)
                if reason is not None:
                    charged = self._charge(ledger, messages, request, reason)
                raise
            except BaseException:  # cancelled in flight (an interrupt, a stop raised in this thread)
                self._charge(ledger, messages, request, "cancelled")
                raise
            choices = getattr(response, "choices", None)
            if not choices or getattr(choices[0], "message", None) is None:
                charged = self._charge(ledger, messages, request, "unusable", getattr(response, "usage", None))
                raise MalformedResponseError("provider returned no choices")
            return response

        response, retries = call_with_retries(call, max_retries=self.max_retries, rng=self.rng,
                                              timeout_s=self.timeout_s, hold=limited)
        return self._completion(messages, request, response, retries)

    def _charge(self, ledger: AttemptLedger | None, messages: list[dict[str, Any]], request: dict[str, Any],
                reason: str, usage: Any = None) -> bool:
        if ledger is not None:
            ledger.charged(self._unanswered_charge(messages, request, reason, usage))
        return True

    def _unanswered_charge(self, messages: list[dict[str, Any]], request: dict[str, Any], reason: str,
                           usage: Any = None) -> Completion:
        """What a request the provider received and never answered usably is charged: the provider's
        own count where its answer carried a usable ``usage`` (a 200 with no choices), else as a call
        cut off in flight: its prompt bound and a completion up to the request's limit (each of its
        ``n`` choices), their cost, flagged estimated."""
        given = [token_count(getattr(usage, field, None)) for field in ("prompt_tokens", "completion_tokens")]
        if usage is not None and None not in given and given != [0, 0]:
            prompt, completion = int(given[0] or 0), int(given[1] or 0)
            return Completion(texts=[], usage=Usage(prompt, completion, prompt + completion), model=self.model,
                              cost_usd=cost_of(self.model, prompt, completion, self.prices), unanswered=reason)
        prompt = self.prompt_bound(messages)
        completion = (completion_limit(request) or 0) * max(1, int(request.get("n") or 1))
        return Completion(texts=[], usage=Usage(prompt, completion, prompt + completion), model=self.model,
                          estimated=True, cost_usd=self.estimate_cost(prompt, completion), unanswered=reason)

    def _completion(self, messages: list[dict[str, Any]], request: dict[str, Any], response: Any,
                    retries: int) -> Completion:
        texts = [str(getattr(c.message, "content", "") or "") for c in response.choices]
        usage = getattr(response, "usage", None)
        given = [token_count(getattr(usage, field, None)) if usage is not None else None
                 for field in ("prompt_tokens", "completion_tokens")]
        estimated = None in given or given == [0, 0]
        if estimated:  # bounds: an estimate is never below what the provider counted
            prompt = self.prompt_bound(messages)
            limit = completion_limit(request)
            completion = sum(min(text_token_bound(t, self._counter or None), limit or 1 << 62) for t in texts)
        else:
            prompt, completion = int(given[0] or 0), int(given[1] or 0)
        return Completion(texts=texts, usage=Usage(prompt, completion, prompt + completion), model=self.model,
                          estimated=estimated, retries=retries,
                          cost_usd=cost_of(self.model, prompt, completion, self.prices))


def _unanswered_reason(exc: BaseException) -> str | None:
    """Why a failed attempt is billed (it reached the provider and no usable answer came back), or
    None: refused with a status, or never sent."""
    error = classify(exc)
    if isinstance(error, MalformedResponseError):
        return "unusable"
    if reached_provider(exc):
        return "timed_out" if isinstance(error, LLMTimeoutError) else "connection_lost"
    return None


class OpenAIBackend(LiteLLMBackend):
    """OpenAI-compatible endpoints (OpenAI, OpenRouter, vLLM, Ollama, llama.cpp) through the ``openai``
    SDK with one pooled client per backend: the same requests as the LiteLLM path, at a fraction of
    its per-call CPU (LiteLLM's logging and routing cost ~6 ms per call)."""

    def __init__(self, *, wire_model: str, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.wire_model = wire_model
        self._client: Any = None
        self._lock = threading.Lock()

    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                import openai

                self._client = openai.OpenAI(api_key=self._api_key or "no-key", base_url=self.base_url,
                                             timeout=self.timeout_s, max_retries=0,
                                             http_client=openai.DefaultHttpxClient(verify=shared_ssl_context()))
            return self._client

    def complete(self, messages: list[dict[str, Any]], *, n: int = 1, sample_index: int = 0, **params: Any) -> Completion:
        request = self._request(messages, n, params)
        for key in ("api_key", "api_base", "num_retries", "timeout"):
            request.pop(key, None)
        request["model"] = self.wire_model
        client = self.client()

        return self._attempts(messages, request, lambda: client.chat.completions.create(**request))


LLMBlock = LLMConfig | Mapping[str, Any]


def resolve_provider(llm: LLMBlock, role: str) -> str | None:
    """The role's provider: its own, the run's, else OpenRouter when only its key is set."""
    llm = LLMConfig.of(llm)
    return llm.role(role).provider or llm.provider or (
        "openrouter" if os.environ.get("OPENROUTER_API_KEY") and not os.environ.get("OPENAI_API_KEY") else None)


@dataclass(frozen=True)
class RoleEndpoint:
    """Where one role's calls go, resolved once for the clients, the credential check and the preflight."""

    settings: RoleConfig  # the role's own ``llm.roles.<role>`` (each falls back to the run's ``llm``)
    provider: str | None
    base_url: str | None
    model: str
    key_env: str | None


def role_endpoint(llm: LLMBlock, role: str) -> RoleEndpoint:
    llm = LLMConfig.of(llm)
    settings = llm.role(role)
    provider = resolve_provider(llm, role)
    base_url = resolve_base_url(settings.base_url or llm.base_url, provider)
    model = resolve_model(settings.model or llm.model, provider, base_url)
    return RoleEndpoint(settings, provider, base_url, model, settings.api_key_env or llm.api_key_env)


def _prices(llm: LLMConfig) -> dict[str, Any]:
    """``llm.prices`` as the pricing functions read them (per model, the two per-million prices)."""
    return {model: price.model_dump() for model, price in llm.prices.items()}


def build_backend(llm: LLMBlock, role: str, seed: int) -> LiteLLMBackend:
    llm = LLMConfig.of(llm)
    endpoint = role_endpoint(llm, role)
    settings, provider, base_url, model = endpoint.settings, endpoint.provider, endpoint.base_url, endpoint.model
    # a role's section sets its temperature, null included (the block as JSON always holds the key)
    temperature = settings.temperature if "temperature" in settings.model_fields_set else llm.temperature
    options: dict[str, Any] = dict(
        provider=provider, key_variable=key_variable(endpoint.key_env, provider),
        model=model, api_key=resolve_key(endpoint.key_env, provider),
        base_url=base_url, temperature=temperature, max_tokens=settings.max_tokens or llm.max_tokens,
        timeout_s=llm.timeout_s, max_retries=llm.max_retries, prices=_prices(llm), seed=seed)
    if base_url and model.startswith("openai/"):
        return OpenAIBackend(wire_model=model.split("/", 1)[1], **options)
    if base_url and provider == "openrouter":
        return OpenAIBackend(wire_model=openai_compatible_model_name(model), **options)
    return LiteLLMBackend(**options)


def calls_without_litellm(llm: LLMBlock) -> bool:
    """Whether every role's calls and their prices go without LiteLLM: each role calls an
    OpenAI-compatible endpoint through the ``openai`` SDK (:class:`OpenAIBackend`) and its model has
    a price in ``llm.prices``.  Then a real run's jobs never import LiteLLM (1.6 s of CPU in the job
    template); otherwise LiteLLM sends a role's calls, or its price map prices them."""
    llm = LLMConfig.of(llm)
    prices = _prices(llm)
    for role in ROLES:
        backend = build_backend(llm, role, 0)
        if not isinstance(backend, OpenAIBackend) or configured_price(backend.model, prices) is None:
            return False
    return True


def tokenizer_needed(llm: LLMBlock) -> bool:
    """Whether some role's prompts are counted with the model's own tokenizer (OpenAI's models on
    OpenAI's API, :mod:`trace_bench.llm.tokenizers`): the run's job template then loads it once."""
    from trace_bench.llm.tokenizers import official_openai

    return any(official_openai(endpoint.model, endpoint.base_url, endpoint.provider) is not None
               for endpoint in (role_endpoint(llm, role) for role in ROLES))


def build_real_session(*, llm: LLMBlock, budget: Budget, seed: int, events: EventSink | None,
                       job_id: str = "") -> LLMSession:
    llm = LLMConfig.of(llm)
    backends = {role: build_backend(llm, role, seed) for role in ROLES}
    return LLMSession(backends, budget=budget, events=events)  # type: ignore[arg-type]

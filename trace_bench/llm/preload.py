"""The provider libraries, imported once in the job template of a real run.

Stub runs and the list commands never import ``litellm`` or ``openai`` (2-8 s on a 2-core
machine, deferred by :mod:`trace_bench._util.lazy`).  A real run needs them in every job: the first
call of each job used to pay the import inside its latency (3-7 s at a provider answering in
50 ms).  The runner's real-mode template calls :func:`preload_llm_stack` once, so every forked
job starts with them loaded, and with what they build at their first use already built.
Nothing here sends a request or starts a thread (the template forks every job).
"""

from __future__ import annotations

import contextlib
from typing import Any

_COMPLETION = {"id": "preload", "object": "chat.completion", "created": 0, "model": "preload",
               "choices": [{"index": 0, "message": {"role": "assistant", "content": "ok"}, "finish_reason": "stop"}],
               "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2}}
_MODELS = {"object": "list", "data": [{"id": "preload", "object": "model", "created": 0, "owned_by": "preload"}]}


def preload_llm_stack(litellm: bool = True) -> None:
    """Warm what ``openai`` and ``litellm`` do at first use: the OpenAI client's resources,
    request transform and response models (one chat completion and one model list answered by an
    in-memory transport), the shared TLS context, LiteLLM's price lookup (every call's cost;
    skipped when ``litellm`` is False: a run whose calls and prices need no LiteLLM).
    The caller has loaded them for real (in a job process they are deferred placeholders until
    then: ``trace_bench._util.lazy.load``).  Idempotent; a missing library is left to the call that
    needs it."""
    from trace_bench.llm.providers import shared_ssl_context

    with contextlib.suppress(ImportError):
        import openai

        _warm_openai(openai)
        openai.DefaultHttpxClient(verify=shared_ssl_context()).close()  # the real transport (httpcore, h11)
    if litellm:
        _warm_litellm()
    import trace_bench.llm.pricing  # noqa: F401
    import trace_bench.llm.retry  # noqa: F401


def _warm_openai(openai: Any) -> None:
    import httpx

    def answer(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, json=_MODELS if request.url.path.endswith("/models") else _COMPLETION)

    transport = httpx.Client(transport=httpx.MockTransport(answer))
    with openai.OpenAI(api_key="preload", base_url="http://preload.invalid/v1", max_retries=0,
                       http_client=transport) as client:
        client.chat.completions.create(model="preload", messages=[{"role": "user", "content": "hi"}], max_tokens=1,
                                       temperature=0.0)
        client.models.list()


def _warm_litellm() -> None:
    with contextlib.suppress(ImportError):
        import litellm

        with contextlib.suppress(Exception):
            litellm.cost_per_token(model="gpt-4o-mini", prompt_tokens=1, completion_tokens=1)

"""A loopback OpenAI-compatible gateway into a job's :class:`~trace_bench.llm.session.LLMSession`.

External libraries (DSPy, TextGrad, OpenEvolve, gepa, Harbor) bring their own LLM clients.  A job
points them at this gateway (``base_url`` + ``api_key``) instead of a provider, so their calls go
through the same session as our own: metered by role, budgeted, cached, retried, bounded by the
run's concurrency limiter, and answered by the stub policy in stub mode.  One accounting for all
trainers.

Contract:

- ``POST /v1/chat/completions`` and ``GET /v1/models`` on 127.0.0.1, a random port, and a bearer
  token that is random per start and registered for secret masking; a wrong or missing token is
  answered 401.
- The role is the ``X-Trace-Role`` header, else a model name ending in ``optimizer``, ``agent`` or
  ``judge`` (after ``-``, ``:``, ``/`` or ``@``), else ``agent``.  The requested model name does not
  pick the provider model: the session's backend for the role does.
- Phase: a gateway started for a trainer (``phase="train"``) meters every call as ``train``; one
  started by a task for its own subprocess (no phase) meters a call as ``measure`` while the harness
  is measuring a state, else as ``train`` (:meth:`LLMSession.ambient_phase`).
- Caller: a gateway started for a task's evaluator (``caller="evaluator"``) tags its calls so, and the
  job's record counts them apart (``eval_*``) inside the phase they belong to.
- A budget stop answers 429 with error type/code ``budget_exhausted`` and ``x-should-retry: false``
  (OpenAI SDKs then do not retry), and records the exception in :attr:`Gateway.budget_error`,
  which the job re-raises once the library returns.  Other LLM errors keep their status class (a
  timeout with none: 504, anything else without one: 502); the
  messages are masked.
"""

from __future__ import annotations

import hmac
import itertools
import json
import re
import secrets
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from trace_bench._util.masking import mask_secrets, register_secret
from trace_bench.config.model_names import ROLES
from trace_bench.llm.errors import BudgetExhausted, LLMError, LLMTimeoutError
from trace_bench.llm.session import LLMSession

_ROLE_SUFFIX = re.compile(r"(?:^|[-:/@])(optimizer|agent|judge)$")
_FORWARDED = ("temperature", "top_p", "max_tokens", "max_completion_tokens", "n", "stop", "seed",
              "response_format", "presence_penalty", "frequency_penalty")


def role_of(header: str | None, model: str | None) -> str:
    if header and header.strip().lower() in ROLES:
        return header.strip().lower()
    match = _ROLE_SUFFIX.search((model or "").strip().lower())
    return match.group(1) if match else "agent"


class Gateway:
    """A running gateway; use :func:`start_gateway`.  Thread-safe; closing is idempotent."""

    def __init__(self, session: LLMSession, host: str = "127.0.0.1", port: int = 0,
                 phase: str | None = None, caller: str | None = None) -> None:
        self.session = session
        self.phase = phase
        self.caller = caller
        self.api_key = "tbgw-" + secrets.token_urlsafe(24)
        register_secret(self.api_key)
        self.budget_error: BudgetExhausted | None = None
        #: called (in the request's thread) when a call is first refused for the budget, before the
        #: 429 is sent: lets a trainer cancel a library that would otherwise keep asking
        self.on_budget_stop: Callable[[], None] | None = None
        self.requests = 0
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer((host, port), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="llm-gateway", daemon=True)
        self._closed = False

    @property
    def address(self) -> tuple[str, int]:
        host, port = self._server.server_address[:2]
        return str(host), int(port)

    @property
    def base_url(self) -> str:
        host, port = self.address
        return f"http://{host}:{port}/v1"

    def client_env(self) -> dict[str, str]:
        """Environment for a *child process* that reads OpenAI settings from the environment
        (this process's ``os.environ`` is never changed)."""
        return {"OPENAI_API_KEY": self.api_key, "OPENAI_API_BASE": self.base_url, "OPENAI_BASE_URL": self.base_url}

    def raise_if_exhausted(self) -> None:
        """Re-raise a budget stop that a library swallowed as an HTTP error."""
        if self.budget_error is not None:
            raise self.budget_error

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            self._server.shutdown()
            self._server.server_close()

    def __enter__(self) -> Gateway:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def authorized(self, headers: Any) -> bool:
        given = headers.get("Authorization") or ""
        token = given[7:].strip() if given[:7].lower() == "bearer " else (headers.get("api-key") or "")
        return hmac.compare_digest(token.encode(), self.api_key.encode())

    def models(self) -> dict[str, Any]:
        names = {backend.model for backend in self.session.backends.values()} | {f"trace-bench-{r}" for r in ROLES}
        return {"object": "list", "data": [{"id": n, "object": "model", "owned_by": "trace-bench"} for n in sorted(names)]}

    def chat(self, body: dict[str, Any], role: str) -> tuple[int, dict[str, Any]]:
        """Forward one chat request into the session: ``(HTTP status, JSON body)``."""
        messages = body.get("messages")
        if not isinstance(messages, list) or not messages:
            return 400, _error("invalid_request_error", "messages must be a non-empty list")
        params = {k: body[k] for k in _FORWARDED if body.get(k) is not None}
        with self._lock:
            self.requests += 1
        try:
            caller = self.caller if self.phase else self.session.ambient_caller() or self.caller
            response = self.session.chat(role, messages, phase=self.phase or self.session.ambient_phase(),
                                         caller=caller, **params)
        except BudgetExhausted as exc:
            first, self.budget_error = self.budget_error is None, exc
            if first and self.on_budget_stop is not None:
                self.on_budget_stop()
            return 429, _error("budget_exhausted", str(exc))
        except LLMError as exc:
            status = exc.status if exc.status and 400 <= exc.status < 600 else \
                504 if isinstance(exc, LLMTimeoutError) else 502
            return status, _error(type(exc).__name__, mask_secrets(str(exc)))
        usage = response.usage
        return 200, {
            "id": f"chatcmpl-tbgw-{next(self._ids)}", "object": "chat.completion", "created": int(time.time()),
            "model": response.model or str(body.get("model") or ""),
            "choices": [{"index": c.index, "finish_reason": c.finish_reason,
                         "message": {"role": "assistant", "content": c.message.content}} for c in response.choices],
            "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                      "total_tokens": usage.total_tokens},
        }


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"error": {"type": kind, "code": kind, "message": message}}


def _stream_chunks(payload: dict[str, Any]) -> bytes:
    """The whole answer as one server-sent-events chunk per choice, for clients that ask to stream."""
    events = []
    for choice in payload["choices"]:
        delta = {"role": "assistant", "content": choice["message"]["content"]}
        chunk = {"id": payload["id"], "object": "chat.completion.chunk", "created": payload["created"],
                 "model": payload["model"],
                 "choices": [{"index": choice["index"], "delta": delta, "finish_reason": choice["finish_reason"]}]}
        events.append(f"data: {json.dumps(chunk)}\n\n")
    final = {"id": payload["id"], "object": "chat.completion.chunk", "created": payload["created"],
             "model": payload["model"], "choices": [], "usage": payload["usage"]}
    events.append(f"data: {json.dumps(final)}\n\ndata: [DONE]\n\n")
    return "".join(events).encode()


def _handler_for(gateway: Gateway) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # headers and body go out in two writes; without TCP_NODELAY the second waits for the
        # client's delayed ACK (~40 ms per call on Linux)
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:  # requests are metered as events instead
            pass

        def _send(self, status: int, payload: dict[str, Any], *, stream: bool = False) -> None:
            data = _stream_chunks(payload) if stream else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "text/event-stream" if stream else "application/json")
            self.send_header("Content-Length", str(len(data)))
            if status == 429:
                self.send_header("x-should-retry", "false")
            self.end_headers()
            self.wfile.write(data)

        def _path(self) -> str:
            return self.path.split("?", 1)[0].rstrip("/")

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if not gateway.authorized(self.headers):
                self._send(401, _error("authentication_error", "invalid or missing gateway token"))
            elif self._path().endswith("/models"):
                self._send(200, gateway.models())
            else:
                self._send(404, _error("not_found", f"no route {self._path()}"))

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if not gateway.authorized(self.headers):
                self._send(401, _error("authentication_error", "invalid or missing gateway token"))
                return
            if not self._path().endswith("/chat/completions"):
                self._send(404, _error("not_found", f"no route {self._path()}"))
                return
            try:
                body = json.loads(raw or b"{}")
            except ValueError:
                self._send(400, _error("invalid_request_error", "body is not JSON"))
                return
            if not isinstance(body, dict):
                self._send(400, _error("invalid_request_error", "body must be a JSON object"))
                return
            status, payload = gateway.chat(body, role_of(self.headers.get("X-Trace-Role"), body.get("model")))
            self._send(status, payload, stream=bool(body.get("stream")) and status == 200)

    return Handler


def start_gateway(session: LLMSession | None = None, *, host: str = "127.0.0.1", port: int = 0,
                  phase: str | None = None, caller: str | None = None) -> Gateway:
    """Start a gateway into ``session`` (default: the current job's session) on a random port;
    ``phase`` fixes the phase of every call it serves, ``caller`` tags them (see the module docstring)."""
    if session is None:
        from trace_bench.llm.current import get_session

        session = get_session()
        if session is None:
            raise RuntimeError("start_gateway needs a session: no job session is set in this process")
    gateway = Gateway(session, host=host, port=port, phase=phase, caller=caller)
    gateway._thread.start()
    return gateway

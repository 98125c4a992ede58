"""Token authentication for the UI server, in the manner of Jupyter's server token.

The UI starts runs, and a run may call a provider with the server's API keys, so no request may
reach it without a secret: a random token, printed in the start-up URL.  The token is accepted as
a ``?token=`` query parameter (first visit), an ``Authorization: token …`` (or ``Bearer``) header
(scripts), or the cookie set on the first accepted request (``HttpOnly``, ``SameSite=Strict``).

The check is one ASGI middleware wrapped around the whole FastAPI app that Gradio builds, so it
covers every route in one place: the page, ``/gradio_api/*`` (queue, upload, file endpoints),
static files, websockets.  The only exception is Gradio's own start-up self-request
(``/gradio_api/startup-events``), let through until :meth:`TokenGate.close_startup` is called
right after launch; that route only runs the app's start-up hooks once.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from http.cookies import SimpleCookie
from typing import Any
from urllib.parse import parse_qsl, urlencode

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

_STARTUP_PATH = "/gradio_api/startup-events"
_REFUSAL = (b"trace-bench ui: this server needs its token. Open the URL it printed at start-up "
            b"(http://127.0.0.1:PORT/?token=...).\n")


def new_token() -> str:
    return secrets.token_urlsafe(32)


@dataclass
class TokenGate:
    """The token of one server, and whether Gradio's start-up self-request may still pass."""

    token: str = field(default_factory=new_token, repr=False)
    starting: bool = True

    @property
    def cookie_name(self) -> str:
        """Per server (two UIs on one host do not overwrite each other's cookie), without revealing the token."""
        return "trace_bench_ui_" + hashlib.sha256(self.token.encode()).hexdigest()[:12]

    def matches(self, candidate: str | None) -> bool:
        return bool(candidate) and hmac.compare_digest(candidate.encode(), self.token.encode())  # type: ignore[union-attr]

    def close_startup(self) -> None:
        self.starting = False

    def url(self, base: str) -> str:
        return f"{base.rstrip('/')}/?token={self.token}"


def _headers(scope: Scope) -> dict[str, str]:
    return {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}


class TokenMiddleware:
    """ASGI middleware: refuse (401, or a websocket close) any request without the gate's token."""

    def __init__(self, app: ASGIApp, gate: TokenGate) -> None:
        self.app = app
        self.gate = gate

    def _credential(self, scope: Scope) -> tuple[bool, bool]:
        """(authorised, came in the query string)."""
        query = dict(parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True))
        if self.gate.matches(query.get("token")):
            return True, True
        headers = _headers(scope)
        scheme, _, value = headers.get("authorization", "").partition(" ")
        if scheme.lower() in ("token", "bearer") and self.gate.matches(value.strip()):
            return True, False
        cookies = SimpleCookie()
        try:
            cookies.load(headers.get("cookie", ""))
        except Exception:  # noqa: BLE001 - a malformed cookie header is simply no credential
            return False, False
        morsel = cookies.get(self.gate.cookie_name)
        return (morsel is not None and self.gate.matches(morsel.value)), False

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        kind = scope.get("type")
        if kind not in ("http", "websocket"):
            await self.app(scope, receive, send)
            return
        path = scope.get("path", "")
        if self.gate.starting and kind == "http" and path == _STARTUP_PATH:
            await self.app(scope, receive, send)
            return
        authorised, from_query = self._credential(scope)
        if not authorised:
            if kind == "websocket":
                await send({"type": "websocket.close", "code": 1008})
            else:
                await _respond(send, 401, _REFUSAL, [(b"content-type", b"text/plain; charset=utf-8"),
                                                     (b"www-authenticate", b'Token realm="trace-bench"')])
            return
        if not from_query:
            await self.app(scope, receive, send)
            return
        cookie = (f"{self.gate.cookie_name}={self.gate.token}; Path=/; HttpOnly; SameSite=Strict").encode()
        if kind == "http" and scope.get("method") == "GET" and path == "/":
            # the page itself: drop the token from the address bar (and the browser history)
            rest = [(k, v) for k, v in parse_qsl(scope.get("query_string", b"").decode("latin-1"),
                                                  keep_blank_values=True) if k != "token"]
            location = "/" + (f"?{urlencode(rest)}" if rest else "")
            await _respond(send, 302, b"", [(b"location", location.encode()), (b"set-cookie", cookie)])
            return

        async def send_with_cookie(message: Message) -> None:
            if message.get("type") == "http.response.start":
                message = dict(message)
                message["headers"] = [*message.get("headers", []), (b"set-cookie", cookie)]
            await send(message)

        await self.app(scope, receive, send_with_cookie if kind == "http" else send)


async def _respond(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status,
                "headers": [*headers, (b"content-length", str(len(body)).encode())]})
    await send({"type": "http.response.body", "body": body})


def middleware(gate: TokenGate) -> Any:
    """The Starlette ``Middleware`` entry for FastAPI's ``middleware=`` argument (Gradio's ``app_kwargs``)."""
    from starlette.middleware import Middleware

    return Middleware(TokenMiddleware, gate=gate)

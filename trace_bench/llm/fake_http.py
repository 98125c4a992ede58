"""The HTTP side of the fake provider (:mod:`trace_bench.llm.fake_server`): routes, answers, streams.

Kept apart from the server's state and options so that each stays readable; nothing here is
meant to be used on its own.
"""

from __future__ import annotations

import json
import re
import select
import socket
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

_WORDS = re.compile(r"\s*\S+|\s+")


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up (a killed job, a finished stream) is normal here, not an error to print."""

    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


def _with_comment(text: str, comment: str) -> str:
    """``text`` with ``comment`` where a proposal carries it into the trainer's state: in each string
    of a JSON answer's ``suggestion``, at the top of each fenced code block, else at the end."""
    try:
        answer = json.loads(text)
    except ValueError:
        answer = None
    if isinstance(answer, dict) and isinstance(answer.get("suggestion"), dict) and answer["suggestion"]:
        answer["suggestion"] = {name: f"{value}\n{comment}" if isinstance(value, str) else value
                                for name, value in answer["suggestion"].items()}
        return json.dumps(answer)
    fenced = re.sub(r"(```[A-Za-z0-9_+-]*\n)", lambda m: f"{m.group(1)}{comment}\n", text)
    return fenced if fenced != text else f"{text}\n{comment}"


def stream_events(payload: dict[str, Any], include_usage: bool) -> Iterator[bytes]:
    """A completion as OpenAI ``chat.completion.chunk`` server-sent events, ending with ``[DONE]``."""
    head = {"id": payload["id"], "object": "chat.completion.chunk", "created": payload["created"],
            "model": payload["model"]}
    extra: dict[str, Any] = {"usage": None} if include_usage else {}

    def event(choices: list[dict[str, Any]], **fields: Any) -> bytes:
        return f"data: {json.dumps({**head, 'choices': choices, **extra, **fields})}\n\n".encode()

    for choice in payload["choices"]:
        index, text = choice["index"], choice["message"]["content"]
        yield event([{"index": index, "delta": {"role": "assistant", "content": ""}, "finish_reason": None}])
        for piece in _WORDS.findall(text):
            yield event([{"index": index, "delta": {"content": piece}, "finish_reason": None}])
        yield event([{"index": index, "delta": {}, "finish_reason": choice["finish_reason"]}])
    if include_usage:
        yield event([], usage=payload["usage"])
    yield b"data: [DONE]\n\n"


class FakeHandler(BaseHTTPRequestHandler):
    """A request to the fake provider: routes, faults, answers and streams, from the state and
    options of its server (``fake``, see :func:`_make_handler`)."""

    protocol_version = "HTTP/1.1"
    #: the FakeLLMServer whose state and options this handler answers with (set per server)
    fake: Any = None
    in_flight = False

    def setup(self) -> None:
        super().setup()
        # headers and body go out in separate writes: without TCP_NODELAY, Nagle plus delayed
        # ACKs add ~40 ms to every keep-alive request
        self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def log_message(self, format: str, *args: Any) -> None:  # quiet
        pass

    def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None,
              counted: bool = False) -> None:
        data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
        if not counted:
            self.fake._count(status)
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.end_headers()
        self._settle()  # before the last bytes: a client that saw its answer then reads settled stats
        self.wfile.write(data)

    def _settle(self) -> None:
        if self.in_flight:
            self.in_flight = False
            self.fake._in_flight(-1)

    def _stream(self, events: Iterator[bytes]) -> None:
        """Each event is its own HTTP chunk, flushed at once, so clients see chunks as they come."""
        self.fake._count(200)
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for data in events:
            if data == b"data: [DONE]\n\n":
                self._settle()
            self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
            self.wfile.flush()
        self._settle()
        self.wfile.write(b"0\r\n\r\n")

    def _refused(self, listing: bool = False) -> bool:
        """401 to a request without the server's key (when it has one; a listing of
        ``public_models`` needs none), and to every request once the key stopped working
        (``refuse_after``; as a permanent quota error with ``refusal="quota"``)."""
        if self.fake._key_refused() and not (listing and self.fake.public_models):
            if self.fake.refusal == "quota":
                self._send(429, {"error": {"message": "You exceeded your current quota, please check your plan "
                                           "and billing details.", "type": "insufficient_quota",
                                           "code": "insufficient_quota"}})
            else:
                self._send(401, {"error": {"message": "the key was revoked", "type": "authentication_error"}})
            return True
        if listing and self.fake.public_models:
            return False
        if self.fake.api_key and self.headers.get("Authorization") != f"Bearer {self.fake.api_key}":
            self._send(401, {"error": {"message": "invalid api key", "type": "authentication_error"}})
            return True
        return False

    def _client_gone(self) -> bool:
        """Whether the client closed its connection while the request was worked on (it gave up:
        its timeout); the answer is served, and billed, all the same."""
        try:
            readable, _, _ = select.select([self.connection], [], [], 0)
            return bool(readable) and self.connection.recv(1, socket.MSG_PEEK) == b""
        except OSError:
            return True

    def do_GET(self) -> None:  # noqa: N802
        self.fake._arrived()
        path = self.path.split("?", 1)[0].rstrip("/")
        if path.endswith("/models"):
            if self._refused(listing=True):
                return
            names = self.fake.known_models or [self.fake.model]
            self._send(200, {"object": "list", "data": [{"id": name, "object": "model"} for name in names]})
        elif path.endswith("/stats"):
            self.fake._count(200)  # the snapshot includes this answer
            self._send(200, self.fake.stats(), counted=True)
        else:
            self._send(404, {"error": {"message": "not found"}})

    def do_POST(self) -> None:  # noqa: N802
        self.fake._arrived()
        length = int(self.headers.get("Content-Length") or 0)
        raw = self.rfile.read(length)
        if self.fake.record:
            with self.fake._lock:
                self.fake.bodies.append(raw.decode("utf-8", "replace"))
        if not self.path.split("?", 1)[0].rstrip("/").endswith("/chat/completions"):
            self._send(404, {"error": {"message": "not found"}})
            return
        if self._refused():
            return
        self.fake._in_flight(+1)
        self.in_flight = True
        try:
            self._chat(raw)
        finally:
            self._settle()

    def _chat(self, raw: bytes) -> None:
        try:
            body = json.loads(raw or b"{}")
        except ValueError:
            self._send(400, {"error": {"message": "body is not JSON"}})
            return
        if isinstance(body, dict):
            self.fake._asked(body)
            if self.fake.known_models and body.get("model") not in self.fake.known_models:
                self._send(404, {"error": {"message": f"model '{body.get('model')}' not found",
                                           "type": "not_found_error"}})
                return
        if self.fake.latency:
            time.sleep(self.fake.latency)
        outcome = self.fake._decide()
        stream = bool(body.get("stream"))
        if not self._fault(outcome, stream):
            self._answer(body, stream, unparseable=outcome == "unparseable")

    def _fault(self, outcome: str, stream: bool) -> bool:
        """Answer with the fault the server decided on, if it decided on one."""
        if outcome == "rate_limit":
            self._send(429, {"error": {"message": "rate limited", "type": "rate_limit_error"}},
                       {"Retry-After": "0.05"})
        elif outcome == "hang":
            time.sleep(self.fake.hang_s)
            self._send(504, {"error": {"message": "gateway timeout"}})
        elif outcome == "error":
            self._send(500, {"error": {"message": "internal error", "type": "server_error"}})
        elif outcome == "malformed" and stream:
            self._stream(iter([b'data: {"id": "broken", "choices": [\n\n', b"data: [DONE]\n\n"]))
        elif outcome == "malformed":
            self._send(200, b'{"id": "broken", "choices": [')
        else:
            return False
        return True

    def _answer(self, body: Any, stream: bool, unparseable: bool) -> None:
        answer = self.fake._answer(body, self.headers.get("Authorization"), unparseable=unparseable)
        if self._client_gone():
            self.fake._abandoned()
        if stream:
            options = body.get("stream_options") or {}
            self._stream(stream_events(answer, bool(options.get("include_usage"))))
        else:
            self._send(200, answer)


def _make_handler(server: Any) -> type[BaseHTTPRequestHandler]:
    """The request handler of ``server`` (a :class:`~trace_bench.llm.fake_server.FakeLLMServer`)."""
    return type("Handler", (FakeHandler,), {"fake": server})



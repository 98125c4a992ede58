"""A fake OpenAI-compatible server for tests and for demos of real mode without a key.

``POST /v1/chat/completions`` answers with the stub policy (or a script of canned replies) and
exact, deterministic ``usage``: as one JSON body, or with ``stream: true`` as server-sent events in
the OpenAI chunk format (word-sized content deltas, a final chunk per choice with its
``finish_reason``, a usage chunk when ``stream_options.include_usage`` is set, then ``[DONE]``).
``GET /v1/models`` lists one model; ``GET /stats`` reports what it served.  Fault injection:
latency, 500s, malformed bodies, 429 with Retry-After every N requests, hanging requests.  With
``attacks`` (``--attack FILE``) it is a hostile provider: every proposal for code carries attack
code (:mod:`trace_bench.llm.attack`); ``record=True`` keeps every request body (``bodies``), so a
test can check what reached the provider.

``/stats`` counts every request in ``requests`` on arrival (any method and route, ``/stats``
included) and every answer in ``by_status`` just before it is sent, so a client holding an answer
sees it counted, and once nothing is in flight ``requests == sum(by_status.values())``.
``max_in_flight`` counts chat completions only.  With ``api_key`` every route but ``/stats``
answers 401 to another bearer token, as a provider does; with ``models`` the server knows only
those models: ``/v1/models`` lists them and a chat completion for another answers 404.  ``max_tokens`` counts the chat completions by the
completion limit they asked for (``max_tokens``, else ``max_completion_tokens``; ``"none"`` when
absent), so a test reads what a client really sent.  With ``echo_key`` (``--echo-key``) every
answer's text ends with the request's key in the clear (``# seen: key=<token>``, the bearer token
without its prefix), as a provider or proxy that echoes credentials does: a run must mask it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import re
import socket
import threading
import time
from collections.abc import Iterator, Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from trace_bench.llm.attack import Attack, AttackPolicy, load_attacks
from trace_bench.llm.stub import StubPolicy
from trace_bench.llm.tokens import estimate_prompt_tokens, estimate_text_tokens

_WORDS = re.compile(r"\s*\S+|\s+")


class _QuietServer(ThreadingHTTPServer):
    """A client that hangs up (a killed job, a finished stream) is normal here, not an error to print."""

    daemon_threads = True

    def handle_error(self, request: object, client_address: object) -> None:
        import sys

        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)  # type: ignore[arg-type]


class FakeLLMServer:
    def __init__(self, *, port: int = 0, host: str = "127.0.0.1", latency: float = 0.0, error_rate: float = 0.0,
                 malformed_rate: float = 0.0, rate_limit_every: int = 0, timeout_rate: float = 0.0,
                 hang_s: float = 30.0, script: Sequence[str] | None = None, seed: int = 0,
                 model: str = "fake-model", api_key: str | None = None, models: Sequence[str] | None = None,
                 attacks: Sequence[Attack] = (), record: bool = False, echo_key: bool = False) -> None:
        self.latency, self.error_rate, self.malformed_rate = latency, error_rate, malformed_rate
        self.rate_limit_every, self.timeout_rate, self.hang_s = rate_limit_every, timeout_rate, hang_s
        self.script = itertools.cycle(list(script)) if script else None
        self.model, self.api_key = model, api_key
        self.known_models = list(models) if models else None  # None: every model name is answered
        self.rng = random.Random(seed)
        self.policy = AttackPolicy(seed=seed, attacks=list(attacks)) if attacks else StubPolicy(seed=seed)
        self.record, self.echo_key = record, echo_key
        self.bodies: list[str] = []
        self._lock = threading.Lock()
        self._counter = 0
        self._stats: dict[str, Any] = {"requests": 0, "by_status": {}, "prompt_tokens": 0, "completion_tokens": 0,
                                       "total_tokens": 0, "in_flight": 0, "max_in_flight": 0, "ok": 0,
                                       "max_tokens": {}}
        self._server = _QuietServer((host, port), self._handler())
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host}:{port}/v1"

    def stats(self) -> dict[str, Any]:
        with self._lock:
            return json.loads(json.dumps(self._stats))

    def start(self) -> FakeLLMServer:
        self._thread = threading.Thread(target=self._server.serve_forever, name="fake-llm", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def serve_forever(self) -> None:
        """Serve in the calling thread until interrupted (the ``trace-bench fake-llm`` command)."""
        try:
            self._server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            self._server.server_close()

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- bookkeeping -----------------------------------------------------------------------
    def _arrived(self) -> None:
        with self._lock:
            self._stats["requests"] += 1

    def _count(self, status: int) -> None:
        with self._lock:
            self._stats["by_status"][str(status)] = self._stats["by_status"].get(str(status), 0) + 1

    def _asked(self, body: dict[str, Any]) -> None:
        limit = body.get("max_tokens", body.get("max_completion_tokens"))
        label = "none" if limit is None else str(limit)
        with self._lock:
            counts = self._stats["max_tokens"]
            counts[label] = counts.get(label, 0) + 1

    def _in_flight(self, delta: int) -> None:
        with self._lock:
            self._stats["in_flight"] += delta
            self._stats["max_in_flight"] = max(self._stats["max_in_flight"], self._stats["in_flight"])

    def _decide(self) -> str:
        with self._lock:
            self._counter += 1
            counter = self._counter
            roll = self.rng.random()
        if self.rate_limit_every and counter % self.rate_limit_every == 0:
            return "rate_limit"
        if roll < self.timeout_rate:
            return "hang"
        roll -= self.timeout_rate
        if roll < self.error_rate:
            return "error"
        roll -= self.error_rate
        if roll < self.malformed_rate:
            return "malformed"
        return "ok"

    # -- answers ---------------------------------------------------------------------------
    def _completion(self, body: dict[str, Any]) -> dict[str, Any]:
        messages = body.get("messages") or []
        n = int(body.get("n") or 1)
        texts = []
        for i in range(n):
            if self.script is not None:
                with self._lock:
                    texts.append(next(self.script))
            else:
                texts.append(self.policy.respond(messages, sample_index=i,
                                                 temperature=body.get("temperature")))
        prompt = estimate_prompt_tokens(messages)
        completion = sum(estimate_text_tokens(t) for t in texts)
        with self._lock:
            self._stats["ok"] += 1
            self._stats["prompt_tokens"] += prompt
            self._stats["completion_tokens"] += completion
            self._stats["total_tokens"] += prompt + completion
        return {"id": f"fake-{self._counter}", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model") or self.model,
                "choices": [{"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": "stop"}
                            for i, t in enumerate(texts)],
                "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                          "total_tokens": prompt + completion}}

    def _answer(self, body: dict[str, Any], authorization: str | None) -> dict[str, Any]:
        """The completion for ``body``, with the request's key appended to each text under ``echo_key``."""
        payload = self._completion(body)
        if self.echo_key:
            token = (authorization or "")[7:] if (authorization or "")[:7].lower() == "bearer " else authorization
            for choice in payload["choices"]:
                choice["message"]["content"] = _with_comment(choice["message"]["content"], f"# seen: key={token or ''}")
        return payload

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        return _make_handler(self)


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


def _make_handler(server: FakeLLMServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

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
                server._count(status)
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            for key, value in (headers or {}).items():
                self.send_header(key, value)
            self.end_headers()
            self._settle()  # before the last bytes: a client that saw its answer then reads settled stats
            self.wfile.write(data)

        def _settle(self) -> None:
            if getattr(self, "in_flight", False):
                self.in_flight = False
                server._in_flight(-1)

        def _stream(self, events: Iterator[bytes]) -> None:
            """Each event is its own HTTP chunk, flushed at once, so clients see chunks as they come."""
            server._count(200)
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

        def _refused(self) -> bool:
            """401 to a request without the server's key (when it has one)."""
            if server.api_key and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                self._send(401, {"error": {"message": "invalid api key", "type": "authentication_error"}})
                return True
            return False

        def do_GET(self) -> None:  # noqa: N802
            server._arrived()
            path = self.path.split("?", 1)[0].rstrip("/")
            if path.endswith("/models"):
                if self._refused():
                    return
                names = server.known_models or [server.model]
                self._send(200, {"object": "list", "data": [{"id": name, "object": "model"} for name in names]})
            elif path.endswith("/stats"):
                server._count(200)  # the snapshot includes this answer
                self._send(200, server.stats(), counted=True)
            else:
                self._send(404, {"error": {"message": "not found"}})

        def do_POST(self) -> None:  # noqa: N802
            server._arrived()
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            if server.record:
                with server._lock:
                    server.bodies.append(raw.decode("utf-8", "replace"))
            if not self.path.split("?", 1)[0].rstrip("/").endswith("/chat/completions"):
                self._send(404, {"error": {"message": "not found"}})
                return
            if self._refused():
                return
            server._in_flight(+1)
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
                server._asked(body)
                if server.known_models and body.get("model") not in server.known_models:
                    self._send(404, {"error": {"message": f"model '{body.get('model')}' not found",
                                               "type": "not_found_error"}})
                    return
            if server.latency:
                time.sleep(server.latency)
            outcome = server._decide()
            stream = bool(body.get("stream"))
            if outcome == "rate_limit":
                self._send(429, {"error": {"message": "rate limited", "type": "rate_limit_error"}},
                           {"Retry-After": "0.05"})
            elif outcome == "hang":
                time.sleep(server.hang_s)
                self._send(504, {"error": {"message": "gateway timeout"}})
            elif outcome == "error":
                self._send(500, {"error": {"message": "internal error", "type": "server_error"}})
            elif outcome == "malformed" and stream:
                self._stream(iter([b'data: {"id": "broken", "choices": [\n\n', b"data: [DONE]\n\n"]))
            elif outcome == "malformed":
                self._send(200, b'{"id": "broken", "choices": [')
            elif stream:
                options = body.get("stream_options") or {}
                answer = server._answer(body, self.headers.get("Authorization"))
                self._stream(stream_events(answer, bool(options.get("include_usage"))))
            else:
                self._send(200, server._answer(body, self.headers.get("Authorization")))

    return Handler


def fake_llm_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="trace-bench fake-llm", description=__doc__.splitlines()[0], formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="examples:\n  trace-bench fake-llm --port 8765\n"
               "  trace-bench fake-llm --port 0 --latency 0.2 --error-rate 0.1   # a slow, flaky provider\n"
               "  trace-bench fake-llm --port 0 --attack attack.py   # a hostile provider: code proposals attack\n"
               "  then: llm: {provider: openai, model: gpt-4o-mini, base_url: http://127.0.0.1:8765/v1}")
    parser.add_argument("--port", type=int, default=0, help="port to listen on; 0 picks a free one (printed)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1: loopback only)")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every request")
    parser.add_argument("--error-rate", type=float, default=0.0, help="fraction of requests answered 500")
    parser.add_argument("--malformed-rate", type=float, default=0.0, help="fraction answered with a broken body")
    parser.add_argument("--rate-limit-every", type=int, default=0, help="answer every N-th request 429")
    parser.add_argument("--timeout-rate", type=float, default=0.0, help="fraction of requests that hang")
    parser.add_argument("--script", help="JSON file with a list of reply texts, used in turn")
    parser.add_argument("--seed", type=int, default=0, help="seed of the error/latency draws and generated replies")
    parser.add_argument("--api-key", help="require this bearer token (401 otherwise)")
    parser.add_argument("--attack", help="hostile provider: every code proposal carries the attack(s) in FILE "
                                         "(Python, or a JSON list)", metavar="FILE")
    parser.add_argument("--models", help="comma-separated models the server knows (404 for others; default: any)")
    parser.add_argument("--echo-key", action="store_true",
                        help="a leaking provider: every answer ends with the request's API key in the clear")
    return parser


def fake_llm_main(argv: Sequence[str] | None = None) -> int:
    args = fake_llm_parser().parse_args(argv)
    script = json.loads(Path(args.script).read_text()) if args.script else None
    server = FakeLLMServer(port=args.port, host=args.host, latency=args.latency, error_rate=args.error_rate,
                           malformed_rate=args.malformed_rate, rate_limit_every=args.rate_limit_every,
                           timeout_rate=args.timeout_rate, script=script, seed=args.seed, api_key=args.api_key,
                           attacks=load_attacks(args.attack) if args.attack else (),
                           models=[m.strip() for m in args.models.split(",") if m.strip()] if args.models else None,
                           echo_key=args.echo_key)
    print(server.url, flush=True)
    server.serve_forever()
    return 0

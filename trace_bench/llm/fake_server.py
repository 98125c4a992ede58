"""A fake OpenAI-compatible server for tests and for demos of real mode without a key.

``POST /v1/chat/completions`` answers with the stub policy (or a script of canned replies) and
exact, deterministic ``usage``; ``GET /v1/models`` lists one model; ``GET /stats`` reports what it
served (requests per status, tokens returned, in-flight maximum).  Fault injection: latency, 500s,
malformed bodies, 429 with Retry-After every N requests, and hanging requests.
"""

from __future__ import annotations

import argparse
import itertools
import json
import random
import socket
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from trace_bench.llm.stub import StubPolicy
from trace_bench.llm.tokens import estimate_prompt_tokens, estimate_text_tokens


class FakeLLMServer:
    def __init__(self, *, port: int = 0, host: str = "127.0.0.1", latency: float = 0.0, error_rate: float = 0.0,
                 malformed_rate: float = 0.0, rate_limit_every: int = 0, timeout_rate: float = 0.0,
                 hang_s: float = 30.0, script: Sequence[str] | None = None, seed: int = 0,
                 model: str = "fake-model", api_key: str | None = None) -> None:
        self.latency, self.error_rate, self.malformed_rate = latency, error_rate, malformed_rate
        self.rate_limit_every, self.timeout_rate, self.hang_s = rate_limit_every, timeout_rate, hang_s
        self.script = itertools.cycle(list(script)) if script else None
        self.model, self.api_key = model, api_key
        self.rng = random.Random(seed)
        self.policy = StubPolicy(seed=seed)
        self._lock = threading.Lock()
        self._counter = 0
        self._stats: dict[str, Any] = {"requests": 0, "by_status": {}, "prompt_tokens": 0, "completion_tokens": 0,
                                       "total_tokens": 0, "in_flight": 0, "max_in_flight": 0, "ok": 0}
        self._server = ThreadingHTTPServer((host, port), self._handler())
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

    def __enter__(self) -> FakeLLMServer:
        return self.start()

    def __exit__(self, *exc: Any) -> None:
        self.stop()

    # -- request handling ------------------------------------------------------------------
    def _count(self, status: int) -> None:
        with self._lock:
            self._stats["by_status"][str(status)] = self._stats["by_status"].get(str(status), 0) + 1

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

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def setup(self) -> None:
                super().setup()
                # headers and body go out in separate writes: without TCP_NODELAY, Nagle plus delayed
                # ACKs add ~40 ms to every keep-alive request
                self.request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

            def log_message(self, format: str, *args: Any) -> None:  # quiet
                pass

            def _send(self, status: int, payload: Any, headers: dict[str, str] | None = None) -> None:
                data = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                for key, value in (headers or {}).items():
                    self.send_header(key, value)
                self.end_headers()
                self.wfile.write(data)
                server._count(status)

            def do_GET(self) -> None:  # noqa: N802
                if self.path.rstrip("/").endswith("/models"):
                    self._send(200, {"object": "list", "data": [{"id": server.model, "object": "model"}]})
                elif self.path.rstrip("/").endswith("/stats"):
                    self._send(200, server.stats())
                else:
                    self._send(404, {"error": {"message": "not found"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                raw = self.rfile.read(length)
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._send(404, {"error": {"message": "not found"}})
                    return
                if server.api_key and self.headers.get("Authorization") != f"Bearer {server.api_key}":
                    self._send(401, {"error": {"message": "invalid api key", "type": "authentication_error"}})
                    return
                with server._lock:
                    server._stats["requests"] += 1
                    server._stats["in_flight"] += 1
                    server._stats["max_in_flight"] = max(server._stats["max_in_flight"], server._stats["in_flight"])
                try:
                    try:
                        body = json.loads(raw or b"{}")
                    except ValueError:
                        self._send(400, {"error": {"message": "body is not JSON"}})
                        return
                    if server.latency:
                        time.sleep(server.latency)
                    outcome = server._decide()
                    if outcome == "rate_limit":
                        self._send(429, {"error": {"message": "rate limited", "type": "rate_limit_error"}},
                                   {"Retry-After": "0.05"})
                    elif outcome == "hang":
                        time.sleep(server.hang_s)
                        self._send(504, {"error": {"message": "gateway timeout"}})
                    elif outcome == "error":
                        self._send(500, {"error": {"message": "internal error", "type": "server_error"}})
                    elif outcome == "malformed":
                        self._send(200, b'{"id": "broken", "choices": [')
                    else:
                        self._send(200, server._completion(body))
                finally:
                    with server._lock:
                        server._stats["in_flight"] -= 1

        return Handler


def fake_llm_main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="trace-bench fake-llm", description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--latency", type=float, default=0.0, help="seconds added to every request")
    parser.add_argument("--error-rate", type=float, default=0.0, help="fraction of requests answered 500")
    parser.add_argument("--malformed-rate", type=float, default=0.0, help="fraction answered with a broken body")
    parser.add_argument("--rate-limit-every", type=int, default=0, help="answer every N-th request 429")
    parser.add_argument("--timeout-rate", type=float, default=0.0, help="fraction of requests that hang")
    parser.add_argument("--script", help="JSON file with a list of reply texts, used in turn")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--api-key", help="require this bearer token")
    args = parser.parse_args(argv)
    script = json.loads(Path(args.script).read_text()) if args.script else None
    server = FakeLLMServer(port=args.port, host=args.host, latency=args.latency, error_rate=args.error_rate,
                           malformed_rate=args.malformed_rate, rate_limit_every=args.rate_limit_every,
                           timeout_rate=args.timeout_rate, script=script, seed=args.seed, api_key=args.api_key)
    print(server.url, flush=True)
    try:
        server._server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server._server.server_close()
    return 0

"""An OpenAI-compatible provider that is not the project's own fake (independent of ``fake_server``).

It answers the way real providers do, one *behaviour* per chat completion, taken in turn from a
script (or drawn by a seeded RNG): usage with and without the ``*_tokens_details`` objects, no usage
at all, SSE when the client asks ``stream``, refusals by status (429 with ``Retry-After``, 500, 502,
503), a connection reset in the middle of a 200's body, a slow first byte, a 200 whose body is not
JSON, empty ``choices``, ``finish_reason: length``, ``content: null`` with a ``refusal``, tool calls
nobody asked for, an answer of megabytes, escape-laden unicode, and an answer that echoes the
caller's bearer token.  It keeps its own ledger: every chat completion that reached it, what it
bills (a provider bills what it generated: every 200 and a body cut off, never a status refusal)
and the tokens it reported.  Loopback only, one thread per connection.
"""

from __future__ import annotations

import json
import random
import threading
import time
from collections.abc import Sequence
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BILLED = ("details", "plain", "no_usage", "slow", "reset", "malformed", "empty_choices", "length",
          "refusal", "tool_calls", "huge", "unicode", "echo")
REFUSED = ("429", "500", "502", "503")
#: bodies no real provider sends, each a 200 the provider bills: a hostile (or broken) provider's
HOSTILE = {"json_null": "null", "json_list": "[]", "json_string": '"ok"',
           "choices_string": '{"choices": "oops", "usage": {"prompt_tokens": 5, "completion_tokens": 5}}',
           "message_null": '{"choices": [{"index": 0, "message": null}]}',
           "choice_null": '{"choices": [null]}',
           "content_object": '{"choices": [{"index": 0, "message": {"role": "assistant", "content": {"a": 1}}}]}',
           "usage_string": '{"choices": [{"index": 0, "message": {"content": "x = 1"}}], "usage": "lots"}',
           "usage_list": '{"choices": [{"index": 0, "message": {"content": "x = 1"}}], "usage": [1, 2]}',
           "usage_negative": '{"choices": [{"index": 0, "message": {"content": "x = 1"}}], '
                             '"usage": {"prompt_tokens": -5, "completion_tokens": 1e300}}',
           "error_in_200": '{"error": {"message": "overloaded", "type": "server_error"}}'}
BEHAVIOURS = BILLED + REFUSED + tuple(HOSTILE)
UNICODE = 'Réponse: x = "1\\n" \u2028 \U0001f600 \\u0000 <|im_end|> \t\r ∑ 日本語 \\"quoted\\"'


def _tokens(text: str) -> int:
    """This provider's tokenizer: one token per three characters (denser than the usual four)."""
    return max(1, -(-len(text) // 3)) if text else 0


class OtherProvider:
    def __init__(self, script: Sequence[str] = (), *, seed: int | None = None, mix: Sequence[str] = BILLED,
                 slow_s: float = 0.3, huge_bytes: int = 3_000_000) -> None:
        self.script = list(script)
        self.rng = random.Random(seed) if seed is not None else None
        self.mix = list(mix)
        self.slow_s, self.huge_bytes = slow_s, huge_bytes
        self.lock = threading.Lock()
        self.requests = 0  # chat completions that reached the server
        self.billed = 0
        self.prompt_tokens = self.completion_tokens = 0  # as reported in a usage object
        self.unreported = 0  # billed requests whose usage the client never saw
        self.seen: list[str] = []
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}/v1"
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    def __enter__(self) -> OtherProvider:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def next_behaviour(self, body: dict[str, Any]) -> str:
        with self.lock:
            self.requests += 1
            if body.get("max_tokens") == 1 and body.get("messages") == [{"role": "user", "content": "ping"}]:
                behaviour = "plain"  # a preflight's one-token check
            elif self.script:
                behaviour = self.script.pop(0)
            elif self.rng is not None:
                behaviour = self.rng.choice(self.mix)
            else:
                behaviour = "plain"
            self.seen.append(behaviour)
            return behaviour

    def bill(self, prompt: int, completion: int, reported: bool) -> None:
        with self.lock:
            self.billed += 1
            if reported:
                self.prompt_tokens += prompt
                self.completion_tokens += completion
            else:
                self.unreported += 1

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        provider = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's naming
                if self.path.rstrip("/").endswith("/models"):
                    self._json(200, {"object": "list", "data": [{"id": "other-model", "object": "model",
                                                                 "owned_by": "other"}]})
                else:
                    self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})

            def do_POST(self) -> None:  # noqa: N802
                length = int(self.headers.get("Content-Length") or 0)
                try:
                    body = json.loads(self.rfile.read(length) or b"{}")
                except ValueError:
                    self._json(400, {"error": {"message": "bad json", "type": "invalid_request_error"}})
                    return
                if not self.path.rstrip("/").endswith("/chat/completions"):
                    self._json(404, {"error": {"message": "not found", "type": "invalid_request_error"}})
                    return
                self._complete(body, provider.next_behaviour(body))

            def _complete(self, body: dict[str, Any], behaviour: str) -> None:
                if behaviour in REFUSED:
                    headers = {"Retry-After": "0"} if behaviour == "429" else {}
                    kind = "rate_limit_exceeded" if behaviour == "429" else "server_error"
                    self._json(int(behaviour), {"error": {"message": f"{behaviour} from the other provider",
                                                          "type": kind, "code": kind}}, headers)
                    return
                if behaviour in HOSTILE:
                    usage = json.loads(HOSTILE[behaviour]) if behaviour == "choices_string" else {}
                    provider.bill(5, 5, reported=True) if usage else provider.bill(0, 0, reported=False)
                    self._send(200, HOSTILE[behaviour].encode(), "application/json")
                    return
                if behaviour == "slow":
                    time.sleep(provider.slow_s)
                prompt_text = json.dumps(body.get("messages"), ensure_ascii=False)
                text = self._text(behaviour, body)
                limit = body.get("max_tokens") or body.get("max_completion_tokens")
                completion = _tokens(text or "")
                if behaviour == "length" and limit:
                    completion = int(limit)
                elif limit:
                    completion = min(completion, int(limit))
                prompt = _tokens(prompt_text) + 7
                reported = behaviour not in ("no_usage", "reset", "malformed")
                if body.get("stream") and behaviour not in ("reset", "malformed"):
                    reported = reported and bool((body.get("stream_options") or {}).get("include_usage"))
                provider.bill(prompt, completion, reported)
                if body.get("stream") and behaviour not in ("reset", "malformed"):
                    self._stream(body, text, prompt, completion, reported)
                    return
                answer = self._answer(body, behaviour, text, prompt, completion)
                raw = json.dumps(answer, ensure_ascii=behaviour != "unicode").encode()
                if behaviour == "malformed":
                    raw = raw[: len(raw) // 2]
                if behaviour == "reset":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(raw)))
                    self.end_headers()
                    self.wfile.write(raw[: len(raw) // 3])
                    self.wfile.flush()
                    self.close_connection = True
                    self.connection.shutdown(2)
                    return
                self._send(200, raw, "application/json")

            def _text(self, behaviour: str, body: dict[str, Any]) -> str | None:
                last = str((body.get("messages") or [{}])[-1].get("content", ""))[:200]
                if behaviour == "huge":
                    return ("x = 1; " * (provider.huge_bytes // 7))
                if behaviour == "unicode":
                    return UNICODE
                if behaviour == "echo":
                    return f"You sent {self.headers.get('Authorization', '')} with: {last}"
                if behaviour in ("refusal", "tool_calls"):
                    return None
                return f"x = 1  # answering: {last[:40]}"

            def _answer(self, body: dict[str, Any], behaviour: str, text: str | None, prompt: int,
                        completion: int) -> dict[str, Any]:
                message: dict[str, Any] = {"role": "assistant", "content": text}
                if behaviour == "refusal":
                    message["refusal"] = "I can't help with that."
                if behaviour == "tool_calls":
                    message["tool_calls"] = [{"id": "call_1", "type": "function",
                                              "function": {"name": "lookup", "arguments": '{"q": "x"}'}}]
                finish = {"length": "length", "tool_calls": "tool_calls"}.get(behaviour, "stop")
                n = int(body.get("n") or 1)
                choices = [] if behaviour == "empty_choices" else [
                    {"index": i, "message": message, "finish_reason": finish, "logprobs": None} for i in range(n)]
                answer: dict[str, Any] = {"id": "chatcmpl-other", "object": "chat.completion",
                                          "created": int(time.time()), "model": body.get("model"),
                                          "choices": choices, "system_fingerprint": "fp_other"}
                if behaviour not in ("no_usage", "reset", "malformed"):
                    usage: dict[str, Any] = {"prompt_tokens": prompt, "completion_tokens": completion,
                                             "total_tokens": prompt + completion}
                    if behaviour == "details":
                        usage["prompt_tokens_details"] = {"cached_tokens": 0, "audio_tokens": 0}
                        usage["completion_tokens_details"] = {"reasoning_tokens": completion // 2,
                                                              "accepted_prediction_tokens": 0}
                    answer["usage"] = usage
                return answer

            def _stream(self, body: dict[str, Any], text: str | None, prompt: int, completion: int,
                        reported: bool) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.send_header("Transfer-Encoding", "chunked")
                self.end_headers()
                base = {"id": "chatcmpl-other", "object": "chat.completion.chunk", "created": int(time.time()),
                        "model": body.get("model")}
                pieces = [(text or "")[i:i + 64] for i in range(0, len(text or ""), 64)] or [""]
                for piece in pieces:
                    self._chunk(json.dumps({**base, "choices": [{"index": 0, "delta": {"content": piece},
                                                                 "finish_reason": None}]}))
                self._chunk(json.dumps({**base, "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]}))
                if reported:
                    self._chunk(json.dumps({**base, "choices": [], "usage": {
                        "prompt_tokens": prompt, "completion_tokens": completion,
                        "total_tokens": prompt + completion}}))
                self._chunk("[DONE]")
                self.wfile.write(b"0\r\n\r\n")

            def _chunk(self, data: str) -> None:
                payload = f"data: {data}\n\n".encode()
                self.wfile.write(f"{len(payload):x}\r\n".encode() + payload + b"\r\n")

            def _json(self, status: int, payload: dict[str, Any], headers: dict[str, str] | None = None) -> None:
                self._send(status, json.dumps(payload).encode(), "application/json", headers)

            def _send(self, status: int, raw: bytes, kind: str, headers: dict[str, str] | None = None) -> None:
                self.send_response(status)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(raw)))
                for name, value in (headers or {}).items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(raw)

        return Handler

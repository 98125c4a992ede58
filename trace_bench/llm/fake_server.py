"""A fake OpenAI-compatible server for tests and for demos of real mode without a key.

``POST /v1/chat/completions`` answers with the stub policy (or a script of canned replies) and
exact, deterministic ``usage``: as one JSON body, or with ``stream: true`` as server-sent events in
the OpenAI chunk format (word-sized content deltas, a final chunk per choice with its
``finish_reason``, a usage chunk when ``stream_options.include_usage`` is set, then ``[DONE]``).
It honours ``max_tokens`` (else ``max_completion_tokens``) as a provider does: a longer answer is
cut to that many tokens, with ``finish_reason: length``.  ``GET /v1/models`` lists one model (or
``models``); ``GET /stats`` reports what it served.  Fault injection: latency (longer than a
client's timeout, the server still runs the request to its end and counts it), 500s, malformed
bodies, 429 with Retry-After every N requests, hanging requests, answers no caller can parse
(``unparseable_rate``), a key that stops working after N completions (``refuse_after``: 401, or
a permanent ``insufficient_quota`` 429 with ``refusal="quota"``; :meth:`FakeLLMServer.reinstate`
fixes it), a model list that answers without the key (``public_models``, as llama.cpp's), and a
tokenizer denser than the rule of thumb (``token_factor``).  With ``attacks`` (``--attack FILE``)
it is a hostile provider: every proposal for code carries attack code
(:mod:`trace_bench.llm.attack`); ``record=True`` keeps every request body (``bodies``), so a test
can check what reached the provider.

``/stats`` counts every request in ``requests`` on arrival (any method and route, ``/stats``
included) and every answer in ``by_status`` just before it is sent, so a client holding an answer
sees it counted, and once nothing is in flight ``requests == sum(by_status.values())``.  ``ok``
and the token counts are what the server *served* (what a provider bills): every completion it
generated, including those whose client had already given up (``abandoned`` counts these: the
client's connection was closed when the answer was ready).  ``max_in_flight`` counts chat
completions only.  With ``api_key`` every route but ``/stats`` answers 401 to another bearer token,
as a provider does; with ``models`` the server knows only those models: ``/v1/models`` lists them
and a chat completion for another answers 404 (by default it answers any model name while listing
one, as llama.cpp does).  ``max_tokens`` counts the chat completions by the completion limit they
asked for (``max_tokens``, else ``max_completion_tokens``; ``"none"`` when absent), so a test reads
what a client really sent.  With ``echo_key`` (``--echo-key``) every answer's text ends with the
request's key in the clear (``# seen: key=<token>``, the bearer token without its prefix), as a
provider or proxy that echoes credentials does: a run must mask it.
"""

from __future__ import annotations

import argparse
import itertools
import json
import math
import random
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from trace_bench.llm.attack import Attack, AttackPolicy, load_attacks
from trace_bench.llm.fake_http import _make_handler, _QuietServer, _with_comment
from trace_bench.llm.stub import StubPolicy
from trace_bench.llm.tokens import estimate_prompt_tokens, estimate_text_tokens


class FakeLLMServer:
    def __init__(self, *, port: int = 0, host: str = "127.0.0.1", latency: float = 0.0, error_rate: float = 0.0,
                 malformed_rate: float = 0.0, rate_limit_every: int = 0, timeout_rate: float = 0.0,
                 hang_s: float = 30.0, script: Sequence[str] | None = None, seed: int = 0,
                 model: str = "fake-model", api_key: str | None = None, models: Sequence[str] | None = None,
                 attacks: Sequence[Attack] = (), record: bool = False, echo_key: bool = False,
                 public_models: bool = False, refuse_after: int | None = None, refusal: str = "auth",
                 unparseable_rate: float = 0.0, token_factor: float = 1.0) -> None:
        self.latency, self.error_rate, self.malformed_rate = latency, error_rate, malformed_rate
        self.rate_limit_every, self.timeout_rate, self.hang_s = rate_limit_every, timeout_rate, hang_s
        self.unparseable_rate, self.token_factor = unparseable_rate, token_factor
        self.script = itertools.cycle(list(script)) if script else None
        self.model, self.api_key, self.public_models = model, api_key, public_models
        self.refuse_after, self.refusal = refuse_after, refusal
        self.known_models = list(models) if models else None  # None: every model name is answered
        self.rng = random.Random(seed)
        self.policy = AttackPolicy(seed=seed, attacks=list(attacks)) if attacks else StubPolicy(seed=seed)
        self.record, self.echo_key = record, echo_key
        self.bodies: list[str] = []
        self._lock = threading.Lock()
        self._counter = 0
        self._stats: dict[str, Any] = {"requests": 0, "by_status": {}, "prompt_tokens": 0, "completion_tokens": 0,
                                       "total_tokens": 0, "in_flight": 0, "max_in_flight": 0, "ok": 0,
                                       "abandoned": 0, "max_tokens": {}}
        self._server = _QuietServer((host, port), _make_handler(self))
        self._server.daemon_threads = True
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{str(host)}:{port}/v1"  # an AF_INET address: (host, port)

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

    def reinstate(self) -> None:
        """The key works again (a user fixed it): ``refuse_after`` no longer applies."""
        with self._lock:
            self.refuse_after = None

    # -- bookkeeping -----------------------------------------------------------------------
    def _arrived(self) -> None:
        with self._lock:
            self._stats["requests"] += 1

    def _count(self, status: int) -> None:
        with self._lock:
            self._stats["by_status"][str(status)] = self._stats["by_status"].get(str(status), 0) + 1

    def _abandoned(self) -> None:
        with self._lock:
            self._stats["abandoned"] += 1

    def _asked(self, body: dict[str, Any]) -> None:
        limit = _limit(body)
        label = "none" if limit is None else str(limit)
        with self._lock:
            counts = self._stats["max_tokens"]
            counts[label] = counts.get(label, 0) + 1

    def _in_flight(self, delta: int) -> None:
        with self._lock:
            self._stats["in_flight"] += delta
            self._stats["max_in_flight"] = max(self._stats["max_in_flight"], self._stats["in_flight"])

    def _key_refused(self) -> bool:
        """Whether the key has stopped working (``refuse_after`` completions were served)."""
        with self._lock:
            return self.refuse_after is not None and self._stats["ok"] >= self.refuse_after

    def _decide(self) -> str:
        with self._lock:
            self._counter += 1
            counter = self._counter
            roll = self.rng.random()
        if self.rate_limit_every and counter % self.rate_limit_every == 0:
            return "rate_limit"
        for outcome, rate in (("hang", self.timeout_rate), ("error", self.error_rate),
                              ("malformed", self.malformed_rate), ("unparseable", self.unparseable_rate)):
            if roll < rate:
                return outcome
            roll -= rate
        return "ok"

    # -- answers ---------------------------------------------------------------------------
    def _count_tokens(self, tokens: int) -> int:
        return tokens if self.token_factor == 1.0 else math.ceil(tokens * self.token_factor)

    def _completion(self, body: dict[str, Any], unparseable: bool = False) -> dict[str, Any]:
        messages = body.get("messages") or []
        n = int(body.get("n") or 1)
        limit = _limit(body)
        texts, reasons = [], []
        for i in range(n):
            if unparseable:
                text = _GARBLED[self.rng.randrange(len(_GARBLED))]
            elif self.script is not None:
                with self._lock:
                    text = next(self.script)
            else:
                text = self.policy.respond(messages, sample_index=i, temperature=body.get("temperature"))
            text, reason = _cut(text, limit, self.token_factor)
            texts.append(text)
            reasons.append(reason)
        prompt = self._count_tokens(estimate_prompt_tokens(messages))
        completion = sum(self._count_tokens(estimate_text_tokens(t)) for t in texts)
        with self._lock:
            self._stats["ok"] += 1
            self._stats["prompt_tokens"] += prompt
            self._stats["completion_tokens"] += completion
            self._stats["total_tokens"] += prompt + completion
        return {"id": f"fake-{self._counter}", "object": "chat.completion", "created": int(time.time()),
                "model": body.get("model") or self.model,
                "choices": [{"index": i, "message": {"role": "assistant", "content": t}, "finish_reason": r}
                            for i, (t, r) in enumerate(zip(texts, reasons, strict=True))],
                "usage": {"prompt_tokens": prompt, "completion_tokens": completion,
                          "total_tokens": prompt + completion}}

    def _answer(self, body: dict[str, Any], authorization: str | None, unparseable: bool = False) -> dict[str, Any]:
        """The completion for ``body``, with the request's key appended to each text under ``echo_key``."""
        payload = self._completion(body, unparseable)
        if self.echo_key:
            token = (authorization or "")[7:] if (authorization or "")[:7].lower() == "bearer " else authorization
            for choice in payload["choices"]:
                choice["message"]["content"] = _with_comment(choice["message"]["content"], f"# seen: key={token or ''}")
        return payload


#: answers in no format any caller asks for (a small model that rambles)
_GARBLED = ("I think the answer depends on many factors and I am not sure.",
            "Sure! Here is what you asked for: something better, probably.",
            "As an AI model I cannot complete this request in that format.")


def _limit(body: dict[str, Any]) -> int | None:
    limit = body.get("max_tokens", body.get("max_completion_tokens"))
    try:
        return None if limit is None else int(limit)
    except (TypeError, ValueError):
        return None


def _cut(text: str, limit: int | None, factor: float) -> tuple[str, str]:
    """``text`` cut to at most ``limit`` tokens as this server counts them, and its finish reason."""
    if limit is None:
        return text, "stop"
    chars = max(0, int(4 * limit / max(factor, 1e-9)))
    while chars and math.ceil(estimate_text_tokens(text[:chars]) * factor) > limit:
        chars -= 1
    return (text, "stop") if len(text) <= chars else (text[:chars], "length")


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
    parser.add_argument("--public-models", action="store_true",
                        help="/v1/models answers without the key (as llama.cpp's does); completions still need it")
    parser.add_argument("--refuse-after", type=int, metavar="N",
                        help="the key stops working after N chat completions (401; see --refusal)")
    parser.add_argument("--refusal", choices=("auth", "quota"), default="auth",
                        help="how a key stops working: 401, or a permanent insufficient_quota 429")
    parser.add_argument("--unparseable-rate", type=float, default=0.0,
                        help="fraction of answers in no format any caller asks for (a small model that rambles)")
    parser.add_argument("--token-factor", type=float, default=1.0,
                        help="count this many times the tokens of the four-characters rule (a denser tokenizer)")
    return parser


def fake_llm_main(argv: Sequence[str] | None = None) -> int:
    args = fake_llm_parser().parse_args(argv)
    script = json.loads(Path(args.script).read_text()) if args.script else None
    server = FakeLLMServer(port=args.port, host=args.host, latency=args.latency, error_rate=args.error_rate,
                           malformed_rate=args.malformed_rate, rate_limit_every=args.rate_limit_every,
                           timeout_rate=args.timeout_rate, script=script, seed=args.seed, api_key=args.api_key,
                           attacks=load_attacks(args.attack) if args.attack else (),
                           models=[m.strip() for m in args.models.split(",") if m.strip()] if args.models else None,
                           echo_key=args.echo_key, public_models=args.public_models,
                           refuse_after=args.refuse_after, refusal=args.refusal,
                           unparseable_rate=args.unparseable_rate, token_factor=args.token_factor)
    print(server.url, flush=True)
    server.serve_forever()
    return 0

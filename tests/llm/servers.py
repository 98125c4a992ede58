"""Fake OpenAI-compatible servers that remember what they were asked (built on the shipped one).

``RecordingServer`` keeps the ``model`` of every completed request, so a test can check which
model each role reached.  ``HoldingServer`` holds its first requests until ``bound`` of them are in
flight together: a concurrency bound is then shown to be *reached*, not merely not exceeded.
``StallingServer`` answers its first ``answered`` requests and holds every later one until
released: a test sees a call in flight for as long as it needs.  Both let the preflight's
one-token check through (:func:`preflight_ping`).  ``network_guard`` makes every
process of a CLI run refuse and log traffic that leaves loopback.
"""

from __future__ import annotations

import json
import os
import threading
from pathlib import Path
from typing import Any

from tests.waiting import PATIENCE_S
from trace_bench.llm.fake_server import FakeLLMServer


def preflight_requests(run: Path) -> tuple[int, int]:
    """(requests, chat completions) the run's preflight sent, from its ``preflight`` events: what a
    server saw beyond the jobs' calls."""
    requests = completions = 0
    path = run / "events.jsonl"
    for line in (path.read_text(encoding="utf-8").splitlines() if path.exists() else []):
        event = json.loads(line)
        if event.get("type") == "preflight":
            requests += event["requests"]
            completions += int(event["method"] == "completion")
    return requests, completions


def preflight_ping(body: dict[str, Any]) -> bool:
    """Whether a chat completion is the preflight's one-token check (a server that holds the jobs'
    requests lets it through: it comes before any job)."""
    return body.get("max_tokens") == 1 and body.get("messages") == [{"role": "user", "content": "ping"}]


class RecordingServer(FakeLLMServer):
    def __init__(self, **options: Any) -> None:
        super().__init__(**options)
        self.models: list[str] = []

    def _completion(self, body: dict[str, Any], unparseable: bool = False) -> dict[str, Any]:
        with self._lock:
            self.models.append(str(body.get("model")))
        return super()._completion(body, unparseable)


class HoldingServer(FakeLLMServer):
    """The first ``bound`` requests wait for each other (a barrier); a concurrency that never
    reaches ``bound`` leaves them waiting until ``PATIENCE_S`` and the barrier breaks."""

    def __init__(self, bound: int, **options: Any) -> None:
        super().__init__(**options)
        self.bound = bound
        self._barrier = threading.Barrier(bound)
        self._holding_seen = 0
        self.barrier_broken = False

    def _completion(self, body: dict[str, Any], unparseable: bool = False) -> dict[str, Any]:
        if preflight_ping(body):
            return super()._completion(body, unparseable)
        with self._lock:
            held = self._holding_seen < self.bound
            self._holding_seen += 1
        if held:
            try:
                self._barrier.wait(timeout=PATIENCE_S)
            except threading.BrokenBarrierError:
                self.barrier_broken = True
        return super()._completion(body, unparseable)


class StallingServer(FakeLLMServer):
    """Answers ``answered`` chat completions, then holds each later one until :meth:`release`
    (or ``PATIENCE_S``).  Wait on :meth:`holding`, not on the stats' ``in_flight``: an answered
    request is still in flight after ``ok`` counted it, until its answer is written."""

    def __init__(self, answered: int = 0, **options: Any) -> None:
        super().__init__(**options)
        self.answered = answered
        self._released = threading.Event()
        self._seen = 0
        self._holding = 0

    def _completion(self, body: dict[str, Any], unparseable: bool = False) -> dict[str, Any]:
        if preflight_ping(body):
            return super()._completion(body, unparseable)
        with self._lock:
            self._seen += 1
            hold = self._seen > self.answered
            self._holding += hold
        if hold:
            try:
                self._released.wait(timeout=PATIENCE_S)
            finally:
                with self._lock:
                    self._holding -= 1
        return super()._completion(body, unparseable)

    def holding(self) -> int:
        """How many requests the server holds now (each arrived after the ``answered`` ones)."""
        with self._lock:
            return self._holding

    def release(self) -> None:
        self._released.set()

    def stop(self) -> None:
        self.release()
        super().stop()


_GUARD = '''
"""Installed by a test through PYTHONPATH: refuse and log every connection that leaves loopback."""
import os
import socket

_LOG = os.environ.get("TRACE_BENCH_TEST_NETWORK_LOG")
_LOOPBACK = ("127.", "::1", "localhost")


def _refuse(what):
    with open(_LOG, "a", encoding="utf-8") as handle:
        handle.write(f"{os.getpid()} {what}\\n")
    raise OSError(f"network access outside loopback refused by the test: {what}")


def _host(address):
    return str(address[0]) if isinstance(address, tuple) and address else str(address)


if _LOG:
    _connect, _getaddrinfo = socket.socket.connect, socket.getaddrinfo

    def connect(self, address):
        if self.family in (socket.AF_INET, socket.AF_INET6) and not _host(address).startswith(_LOOPBACK):
            _refuse(f"connect {address}")
        return _connect(self, address)

    def getaddrinfo(host, *args, **kwargs):
        if host is not None and not str(host).startswith(_LOOPBACK):
            _refuse(f"resolve {host}")
        return _getaddrinfo(host, *args, **kwargs)

    socket.socket.connect = connect
    socket.getaddrinfo = getaddrinfo
'''


def network_guard(directory: Path) -> tuple[dict[str, str], Path]:
    """Environment for a CLI run in which every process refuses (and logs to the returned file) any
    connection or name lookup outside loopback; an empty log proves no traffic went elsewhere."""
    site = directory / "netguard"
    site.mkdir(parents=True, exist_ok=True)
    (site / "sitecustomize.py").write_text(_GUARD, encoding="utf-8")
    log = directory / "network.log"
    log.write_text("", encoding="utf-8")
    path = os.pathsep.join(p for p in (str(site), os.environ.get("PYTHONPATH", "")) if p)
    return {"PYTHONPATH": path, "TRACE_BENCH_TEST_NETWORK_LOG": str(log)}, log


class UnusableServer(FakeLLMServer):
    """Answers every ``every``-th chat completion with a 200 the client cannot use, as a provider that
    received (and bills) the request: ``kind`` ``"no_choices"`` (``"choices": []`` and no ``usage``: one
    with its usage is charged that, :mod:`tests.llm.test_other_provider`), ``"truncated"``
    (a JSON body cut short) or ``"bad_usage"`` (a usable answer whose ``usage`` fields are no counts)."""

    BAD_USAGE = {"prompt_tokens": "lots", "completion_tokens": None, "total_tokens": -5}

    def __init__(self, kind: str, every: int = 1, **options: Any) -> None:
        super().__init__(**options)
        self.kind, self.every = kind, every
        self._completions = 0

    def _unusable(self) -> bool:
        with self._lock:
            self._completions += 1
            return self._completions % self.every == 0

    def _decide(self) -> str:
        outcome = super()._decide()
        if self.kind == "truncated" and outcome == "ok" and self._unusable():
            return "malformed"
        return outcome

    def _completion(self, body: dict[str, Any], unparseable: bool = False) -> dict[str, Any]:
        payload = super()._completion(body, unparseable)
        if self.kind != "truncated" and self._unusable():
            if self.kind == "no_choices":
                payload["choices"] = []
                payload.pop("usage", None)
            else:
                payload["usage"] = dict(self.BAD_USAGE)
        return payload

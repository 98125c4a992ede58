"""The job's side of an evaluator's LLM endpoint: connections from the sandbox to the run's gateway.

An evaluator that calls an LLM (a prompt folder's) reaches the job's metered gateway
(:mod:`trace_bench.llm.gateway`), started for the task once per job, tagged ``evaluator``: its calls
are metered (``eval_llm_calls``, ``eval_tokens``, ``eval_cost_usd`` in the job's record), counted by
the budget while the trainer evaluates (the harness's measurements are ``measure`` calls, as
always), answered by the stub policy in stub mode, cached and replayed like every other call.

Per evaluation, :meth:`EvaluatorLLM.channel` makes a Unix socket pair; one end goes into the
sandboxed call (:mod:`.llm_endpoint` sends each connection it accepts over it, as a descriptor),
and a thread here relays each connection's bytes to the gateway until either side closes.
Descriptors that are not sockets are closed unread.
"""

from __future__ import annotations

import contextlib
import os
import socket
import stat
import threading
from collections.abc import Iterator
from typing import Any

from trace_bench._util.errors import TraceBenchError

CALLER = "evaluator"


class NoSession(TraceBenchError, RuntimeError):
    """The evaluator calls an LLM, and no job session is there to meter it."""


class EvaluatorLLM:
    """The gateway an evaluator's calls go through (started on first use) and its per-call relays."""

    def __init__(self) -> None:
        self._gateway: Any = None
        self._lock = threading.Lock()

    def gateway(self) -> Any:
        with self._lock:
            if self._gateway is None:
                from trace_bench.llm.gateway import start_gateway

                try:
                    self._gateway = start_gateway(caller=CALLER)
                except RuntimeError as exc:
                    raise NoSession("this task's evaluator calls an LLM, which needs a job's LLM session (run it "
                                    f"with trace-bench run or validate --strict): {exc}") from None
            return self._gateway

    @property
    def api_key(self) -> str:
        return str(self.gateway().api_key)

    @contextlib.contextmanager
    def channel(self) -> Iterator[int]:
        """A descriptor to hand to one sandboxed call; its connections are relayed while the block runs."""
        gateway = self.gateway()
        host, port = gateway.address
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        relay = threading.Thread(target=_accept, args=(ours, (host, port)), name="llm-link", daemon=True)
        relay.start()
        try:
            yield theirs.fileno()
        finally:
            theirs.close()
            with contextlib.suppress(OSError):
                ours.shutdown(socket.SHUT_RDWR)
            ours.close()

    def close(self) -> None:
        with self._lock:
            if self._gateway is not None:
                self._gateway.close()
                self._gateway = None


def _accept(channel: socket.socket, address: tuple[str, int]) -> None:
    while True:
        try:
            message, descriptors, _, _ = socket.recv_fds(channel, 16, 4)
        except OSError:
            return
        if not message and not descriptors:
            return
        for descriptor in descriptors:
            if not stat.S_ISSOCK(os.fstat(descriptor).st_mode):
                os.close(descriptor)
                continue
            connection = socket.socket(fileno=descriptor)
            threading.Thread(target=_relay, args=(connection, address), name="llm-relay", daemon=True).start()


def _pump(source: socket.socket, target: socket.socket) -> None:
    try:
        while True:
            data = source.recv(1 << 16)
            if not data:
                break
            target.sendall(data)
    except OSError:
        pass
    with contextlib.suppress(OSError):
        target.shutdown(socket.SHUT_WR)


def _relay(connection: socket.socket, address: tuple[str, int]) -> None:
    try:
        upstream = socket.create_connection(address, timeout=None)
    except OSError:
        connection.close()
        return
    back = threading.Thread(target=_pump, args=(upstream, connection), daemon=True)
    back.start()
    _pump(connection, upstream)
    back.join()
    connection.close()
    upstream.close()

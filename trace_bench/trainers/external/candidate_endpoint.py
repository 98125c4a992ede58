"""A loopback endpoint through which a library's evaluator *process* hands candidates to the job.

Some libraries (ShinkaEvolve) evaluate a program by starting ``python evaluate.py --program_path
X ...`` themselves.  trace-bench must score the candidate with the task, in its sandbox, so the
``evaluate.py`` the library gets is :meth:`CandidateEndpoint.evaluator_source`: standard library
only, it reads the program file *as text* (never imports it), posts it here with a per-run token,
and returns what the job answers.  The job side runs ``evaluate(code) -> dict`` in a server thread.
Nothing listens beyond 127.0.0.1; the token (no provider credential: it only opens this endpoint)
lives in the library's temporary directory and dies with the run.
"""

from __future__ import annotations

import hmac
import json
import secrets
import threading
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from trace_bench._util.http import JSONHandler

Evaluate = Callable[[str], dict[str, Any]]


class CandidateEndpoint:
    """``POST /evaluate`` with ``{"program": code}`` answers ``evaluate(code)`` as JSON (a context manager)."""

    def __init__(self, evaluate: Evaluate) -> None:
        self.token = "tbev-" + secrets.token_urlsafe(24)
        self._evaluate = evaluate
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), _handler_for(self))
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="candidate-endpoint", daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{str(host)}:{port}/evaluate"  # an AF_INET address: (host, port)

    def evaluator_source(self, note: str, timeout_s: float) -> str:
        """An ``evaluate(program_path) -> dict`` module that asks this endpoint (no ``__main__`` block:
        a library may append its own command-line wrapper)."""
        return (f'"""{note}"""\n\nimport json\nimport urllib.request\n\n'
                f"_URL = {self.url!r}\n_TOKEN = {self.token!r}\n\n\n"
                "def evaluate(program_path):\n"
                "    with open(program_path, encoding='utf-8') as handle:\n"
                "        program = handle.read()\n"
                "    request = urllib.request.Request(_URL, data=json.dumps({'program': program}).encode(),\n"
                "                                     headers={'Authorization': 'Bearer ' + _TOKEN,\n"
                "                                              'Content-Type': 'application/json'})\n"
                f"    with urllib.request.urlopen(request, timeout={float(timeout_s)!r}) as response:\n"
                "        return json.loads(response.read())\n")

    def answer(self, code: str) -> dict[str, Any]:
        return self._evaluate(code)

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()

    def __enter__(self) -> CandidateEndpoint:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


def _handler_for(endpoint: CandidateEndpoint) -> type[BaseHTTPRequestHandler]:
    class Handler(JSONHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            given = self.headers.get("Authorization") or ""
            if not hmac.compare_digest(given.encode(), f"Bearer {endpoint.token}".encode()):
                self.send_json(401, {"error": "invalid or missing token"})
                return
            try:
                program = json.loads(raw or b"{}")["program"]
                if not isinstance(program, str):
                    raise TypeError("program must be a string")
            except (ValueError, KeyError, TypeError) as exc:
                self.send_json(400, {"error": f"bad request: {exc}"})
                return
            try:
                self.send_json(200, endpoint.answer(program))
            except Exception as exc:  # the job's evaluation failed: the library sees an evaluation error
                self.send_json(500, {"error": f"{type(exc).__name__}: {exc}"})

    return Handler

"""The base of our small loopback JSON servers (the candidate endpoint, the kernel-evaluation server).

They answer each request with one JSON object and log nothing to stderr (a job's stderr is its
log; a request per candidate would drown it).
"""

from __future__ import annotations

import json
from http.server import BaseHTTPRequestHandler
from typing import Any


class JSONHandler(BaseHTTPRequestHandler):
    """A request handler that is quiet and answers with :meth:`send_json`."""

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def send_json(self, status: int, payload: dict[str, Any]) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

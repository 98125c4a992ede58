"""A KernelBench evaluation server speaking trace-bench's protocol, for a machine with a GPU.

``python -m trace_bench.tasks.kernelbench.server --port 6000 [--host 127.0.0.1] [--token-env NAME]``

It evaluates each request with :class:`~trace_bench.tasks.kernelbench.evaluation.LocalEvaluator`
(one fresh child process per request, one request at a time per GPU).  It binds to 127.0.0.1
unless told otherwise and, with ``--token-env``, requires that bearer token: it runs whatever
CUDA code it is sent, so expose it only through an SSH tunnel or a private network.
"""

from __future__ import annotations

import argparse
import hmac
import json
import os
import threading
from collections.abc import Sequence
from http.server import ThreadingHTTPServer

from trace_bench._util.http import JSONHandler
from trace_bench.tasks.kernelbench.local import TRIALS, LocalEvaluator


def make_server(host: str, port: int, token: str | None, evaluator: LocalEvaluator) -> ThreadingHTTPServer:
    gpu = threading.Lock()

    class Handler(JSONHandler):
        protocol_version = "HTTP/1.1"

        def _authorized(self) -> bool:
            if not token:
                return True
            given = self.headers.get("Authorization") or ""
            return hmac.compare_digest(given.encode(), f"Bearer {token}".encode())

        def do_GET(self) -> None:  # noqa: N802 - http.server's naming
            if not self._authorized():
                self.send_json(401, {"error": "invalid token"})
            elif self.path.rstrip("/") == "/health":
                self.send_json(200, {"status": "ok"})
            else:
                self.send_json(404, {"error": "not found"})

        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            if not self._authorized():
                self.send_json(401, {"error": "invalid token"})
                return
            if self.path.rstrip("/") != "/evaluate":
                self.send_json(404, {"error": "not found"})
                return
            try:
                body = json.loads(raw)
                args = (str(body["problem_id"]), str(body["ref_arch_src"]), str(body["custom_src"]), int(body["seed"]))
                timeout = float(body.get("timeout") or evaluator.timeout_s)
            except (ValueError, KeyError, TypeError) as exc:
                self.send_json(400, {"error": f"bad request: {exc}"})
                return
            with gpu:
                result = LocalEvaluator(timeout_s=timeout, trials=evaluator.trials).evaluate(*args)
            self.send_json(200, result.to_json())

    return ThreadingHTTPServer((host, port), Handler)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m trace_bench.tasks.kernelbench.server")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=6000)
    parser.add_argument("--token-env", help="environment variable holding the required bearer token")
    parser.add_argument("--trials", type=int, default=TRIALS)
    args = parser.parse_args(argv)
    token = os.environ.get(args.token_env) if args.token_env else None
    if args.token_env and not token:
        parser.error(f"--token-env {args.token_env}: the variable is not set")
    server = make_server(args.host, args.port, token, LocalEvaluator(trials=args.trials))
    print(f"serving KernelBench evaluations on http://{args.host}:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

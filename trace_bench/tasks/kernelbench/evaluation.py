"""Evaluating a KernelBench candidate: on a local CUDA GPU (:mod:`.local`, in the sandbox), or
through an evaluation server.

Both paths give a :class:`KernelResult`.  The server protocol (HTTP + JSON):

- ``GET {url}/health`` -> ``200 {"status": "ok", ...}``
- ``POST {url}/evaluate`` with ``{"problem_id": str, "ref_arch_src": str, "custom_src": str,
  "timeout": seconds, "seed": int}`` -> ``200 {"compiled": bool, "correct": bool,
  "runtime_ms": float | null, "ref_runtime_ms": float | null, "error": str | null}``

A bearer token is sent when one is configured (``Authorization: Bearer <token>``).  The server must
enforce ``timeout`` itself and report a hung kernel as ``{"compiled": true, "correct": false,
"error": "timeout ..."}``; a server that does not answer within ``timeout`` + 30 s, answers non-200
or answers something that is not this JSON is an *infrastructure* failure
(:class:`EvalServerError`, job status ``infra_error``), never a score of 0.
:mod:`trace_bench.tasks.kernelbench.server` serves this protocol with the local evaluator, so a
server's answers are made the same way: candidates in the sandbox, judged by trusted code.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import asdict, dataclass
from typing import Any

from trace_bench._util.errors import TraceBenchError

CLIENT_SLACK_S = 30.0


class EvalServerError(TraceBenchError, RuntimeError):
    """The evaluation infrastructure failed (unreachable, timed out, malformed answer)."""

    job_status = "infra_error"


@dataclass
class KernelResult:
    compiled: bool
    correct: bool
    runtime_ms: float | None = None
    ref_runtime_ms: float | None = None
    error: str = ""

    @property
    def speedup(self) -> float:
        if not (self.compiled and self.correct and self.runtime_ms and self.ref_runtime_ms):
            return 0.0
        return self.ref_runtime_ms / self.runtime_ms

    @classmethod
    def from_json(cls, data: Any) -> KernelResult:
        """Validate an answer of the protocol; ``EvalServerError`` when it is not one."""
        if not isinstance(data, dict) or not isinstance(data.get("compiled"), bool) \
                or not isinstance(data.get("correct"), bool):
            raise EvalServerError(f"malformed evaluation result (needs booleans compiled, correct): {str(data)[:200]}")
        times = {}
        for key in ("runtime_ms", "ref_runtime_ms"):
            value = data.get(key)
            if value is not None and (isinstance(value, bool) or not isinstance(value, (int, float)) or value <= 0):
                raise EvalServerError(f"malformed evaluation result: {key}={value!r}")
            times[key] = None if value is None else float(value)
        return cls(data["compiled"], data["correct"], error=str(data.get("error") or ""), **times)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


class RemoteEvaluator:
    def __init__(self, url: str, *, token: str | None = None, timeout_s: float = 300.0,
                 slack_s: float = CLIENT_SLACK_S) -> None:
        self.url = url.rstrip("/")
        self._token = token
        self.timeout_s = timeout_s
        self.slack_s = slack_s

    def _request(self, path: str, body: dict[str, Any] | None, timeout: float) -> Any:
        headers = {"Content-Type": "application/json"}
        if self._token:
            headers["Authorization"] = f"Bearer {self._token}"
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.url + path, data=data, headers=headers,
                                         method="GET" if body is None else "POST")
        try:
            with urllib.request.urlopen(request, timeout=timeout) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            raise EvalServerError(f"evaluation server {self.url} answered {exc.code}: "
                                  f"{exc.read()[:200].decode(errors='replace')}") from None
        except (urllib.error.URLError, TimeoutError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise EvalServerError(f"evaluation server {self.url} unreachable or timed out: {reason}") from None
        try:
            return json.loads(raw)
        except ValueError:
            raise EvalServerError(f"evaluation server {self.url} sent invalid JSON: {raw[:200]!r}") from None

    def health(self) -> dict[str, Any]:
        answer = self._request("/health", None, timeout=10.0)
        if not isinstance(answer, dict) or answer.get("status") != "ok":
            raise EvalServerError(f"evaluation server {self.url} is not healthy: {str(answer)[:200]}")
        return answer

    def evaluate(self, problem_id: str, ref_src: str, custom_src: str, seed: int) -> KernelResult:
        body = {"problem_id": problem_id, "ref_arch_src": ref_src, "custom_src": custom_src,
                "timeout": self.timeout_s, "seed": seed}
        return KernelResult.from_json(self._request("/evaluate", body, timeout=self.timeout_s + self.slack_s))


def cuda_available() -> bool:
    try:
        import torch
    except ImportError:
        return False
    return bool(torch.cuda.is_available())

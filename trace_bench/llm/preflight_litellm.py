"""The preflight's one-token completion through LiteLLM, run as a child of the driver.

``python -m trace_bench.llm.preflight_litellm`` reads ``{"model", "timeout_s"}`` on stdin, the key
from ``TRACE_BENCH_PREFLIGHT_KEY`` (absent: LiteLLM's own variables), sends one completion of one
token and prints one JSON line: ``{"status", "kind", "message", "prompt_tokens",
"completion_tokens"}`` with ``kind`` ``ok``, ``auth``, ``not_found``, ``connection`` or ``other``.
The driver stays free of LiteLLM's import (about 2 s); the message is masked for secrets.
"""

from __future__ import annotations

import json
import os
import sys
from typing import Any


def ping(model: str, timeout_s: float, key: str | None) -> dict[str, Any]:
    from trace_bench._util.runtime import set_environment_defaults

    set_environment_defaults()  # LiteLLM's bundled price map: nothing is downloaded
    import litellm

    from trace_bench._util.masking import mask_secrets, register_secret
    from trace_bench.llm.errors import AuthenticationError, BadRequestError, LLMConnectionError
    from trace_bench.llm.retry import classify

    register_secret(key)
    options: dict[str, Any] = {"api_key": key} if key else {}
    try:
        response = litellm.completion(model=model, messages=[{"role": "user", "content": "ping"}], max_tokens=1,
                                      timeout=timeout_s, num_retries=0, **options)
    except Exception as exc:  # noqa: BLE001 - classified
        error = classify(exc)
        kind = ("auth" if isinstance(error, AuthenticationError) else
                "not_found" if isinstance(error, BadRequestError) and error.status == 404 else
                "connection" if isinstance(error, LLMConnectionError) else "other")
        return {"status": error.status, "kind": kind, "message": mask_secrets(str(error))}
    usage = getattr(response, "usage", None)
    return {"status": 200, "kind": "ok", "prompt_tokens": int(getattr(usage, "prompt_tokens", 0) or 0),
            "completion_tokens": int(getattr(usage, "completion_tokens", 0) or 0)}


def main() -> int:
    request = json.loads(sys.stdin.read() or "{}")
    key = os.environ.pop("TRACE_BENCH_PREFLIGHT_KEY", None)
    print(json.dumps(ping(str(request.get("model")), float(request.get("timeout_s") or 10.0), key)), flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

"""Process-wide defaults the harness sets itself (not only in tests).

No surprise network traffic: dependency telemetry and update checks are off, and LiteLLM uses
its bundled price map.  ``litellm``/``openai`` are deferred so stub runs never pay for them.
"""

from __future__ import annotations

import os

DEFAULTS = {
    "LITELLM_LOCAL_MODEL_COST_MAP": "True",
    "GRADIO_ANALYTICS_ENABLED": "False",
    "RAY_USAGE_STATS_ENABLED": "0",
    "HF_HUB_DISABLE_TELEMETRY": "1",
    "DO_NOT_TRACK": "1",
    "DSP_CACHEBOOL": "False",
    "TOKENIZERS_PARALLELISM": "false",
}

_configured = False


def configure_environment() -> None:
    global _configured
    if _configured:
        return
    for key, value in DEFAULTS.items():
        os.environ.setdefault(key, value)
    from trace_bench._lazy import defer

    defer("litellm", "openai", "black")
    _configured = True

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
    # datasets pings an S3 bucket to count every load, even of a local JSON file, unless this is off
    "HF_UPDATE_DOWNLOAD_COUNTS": "0",
    "DO_NOT_TRACK": "1",
    "DSP_CACHEBOOL": "False",
    "TOKENIZERS_PARALLELISM": "false",
}

_configured = False


#: Installed libraries' files, by the module name a compile-time warning carries (its file's path).
LIBRARY_FILES = r".*[\\/](site|dist)-packages[\\/]"


def set_environment_defaults() -> None:
    """The quiet-by-default variables, unless the user set them; cheap enough for every command.

    Also silences the SyntaxWarnings an installed library's old code raises when Python first
    compiles it (reasoning_gym's cellpylib: ``is`` with a literal): on a fresh install they landed in
    the middle of a run's output, once, from whichever process imported it first.  Warnings from
    the user's or the optimizer's code are untouched."""
    import warnings

    for key, value in DEFAULTS.items():
        os.environ.setdefault(key, value)
    warnings.filterwarnings("ignore", category=SyntaxWarning, module=LIBRARY_FILES)


def configure_environment() -> None:
    global _configured
    if _configured:
        return
    set_environment_defaults()
    from trace_bench._util.lazy import defer

    defer("litellm", "openai", "black")
    _lenient_code_formatting()
    _configured = True


def _lenient_code_formatting() -> None:
    """OptoPrime formats every suggested string containing ``def`` with black; for non-Python
    parameters (Lean proofs, prompts that mention ``def``) black raises and the suggestion is
    silently dropped.  In trace-bench processes a failed format keeps the text as it is."""
    import sys

    placeholder = sys.modules.get("black")
    if placeholder is None:
        return

    def format_str(src_contents: str, *, mode: object) -> str:
        from trace_bench._util.lazy import load

        try:
            formatted: str = load("black").format_str(src_contents, mode=mode)
            return formatted
        except Exception:
            return src_contents

    object.__setattr__(placeholder, "format_str", format_str)

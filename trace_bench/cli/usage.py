"""What every command shares: failing with a usage error (exit 2) and loading a config."""

from __future__ import annotations

import sys
from typing import Any

from trace_bench._util.errors import ConfigError

USER_ERROR = 2


def fail(message: str) -> int:
    print(f"trace-bench: error: {message}", file=sys.stderr)
    return USER_ERROR


def print_text(text: str) -> None:
    if text:
        print(text)


def load(config_path: str, overrides: list[tuple[str, str]] | None = None) -> Any:
    from trace_bench.config.loader import load_config

    return load_config(config_path, overrides or ())


def config_error(exc: ConfigError, path: str | None, overrides: list[tuple[str, str]] | None = None) -> int:
    """Print a config error; one about a flag (an override among them) names the flag, never a file."""
    if overrides:
        from trace_bench.config.overrides import blame, parse_overrides

        try:
            exc = blame(exc, parse_overrides(overrides))
        except ConfigError:
            pass
    if exc.file is None:
        exc = exc.with_file(path)
    return fail(str(exc))


def warn_model_in_stub(config: Any, overrides: list[tuple[str, str]]) -> None:
    if config.mode == "stub" and any(flag == "--model" for flag, _ in overrides):
        print("trace-bench: warning: --model has no effect in stub mode (the stub LLM answers every call); "
              "add --mode real to call the model", file=sys.stderr)

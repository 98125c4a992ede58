"""The Gradio UI (``trace-bench ui``): launch runs in the background, browse, compare, inspect jobs.

Gradio is an optional extra; it is imported only inside :func:`build_app`, so importing this
package (for the helpers, or from the CLI) costs nothing and works without it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def build_app(runs_dir: str | Path = "runs", tasks_root: str | None = None,
              configs_dir: str | Path | None = None) -> Any:
    from trace_bench.ui.app import build_app as build

    return build(runs_dir, tasks_root, configs_dir)


def launch_ui(runs_dir: str | Path = "runs", tasks_root: str | None = None, port: int | None = None,
              share: bool = False, configs_dir: str | Path | None = None, block: bool = True,
              no_token: bool = False) -> int:
    from trace_bench.ui.app import launch_ui as launch

    return launch(runs_dir, tasks_root, port, share, configs_dir, block, no_token)


__all__ = ["build_app", "launch_ui"]

"""Build and serve the Gradio app (``trace-bench ui``).

The server binds 127.0.0.1 unless ``--share`` is given.  Nothing secret is ever an initial value
or an output: the API key box starts empty, and every text that reaches the browser went
through the masking boundary in :mod:`trace_bench.ui.readers`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from trace_bench.ui.context import UIContext, preselect

TITLE = "trace-bench"
CSS = "#tb-progress-text{font-family:ui-monospace,monospace;font-size:13px;margin-top:4px}"


def build_app(runs_dir: str | Path = "runs", tasks_root: str | None = None,
              configs_dir: str | Path | None = None) -> Any:
    """The UI as a ``gr.Blocks`` (not launched): Launch, Browse, Compare and Job inspector tabs."""
    import gradio as gr

    from trace_bench.ui.tabs import browse, compare, inspector, launch

    ctx = UIContext.create(runs_dir, tasks_root, configs_dir)
    with gr.Blocks(title=TITLE, analytics_enabled=False) as app:
        gr.Markdown(f"## trace-bench\nRuns directory `{ctx.runs_dir}`. The files there are the record; this UI "
                    "reads them and starts `trace-bench run` in the background.", elem_id="tb-header")
        with gr.Tabs():
            with gr.Tab("Launch", id="launch", elem_id="tb-tab-launch"):
                launched = launch.build(ctx)
            with gr.Tab("Browse", id="browse", elem_id="tb-tab-browse") as browse_tab:
                browsed = browse.build(ctx)
            with gr.Tab("Compare", id="compare", elem_id="tb-tab-compare") as compare_tab:
                compared = compare.build(ctx)
            with gr.Tab("Job inspector", id="inspector", elem_id="tb-tab-inspector") as inspector_tab:
                inspected = inspector.build(ctx)

        # Run lists go stale as runs start; refresh them when a page loads and when a tab is opened.
        browse_tab.select(browsed["refresh"], browsed["run"], browsed["refresh_outputs"])
        compare_tab.select(compared["refresh"], [compared["run_a"], compared["run_b"]],
                           [compared["run_a"], compared["run_b"]])
        inspector_tab.select(inspected["refresh"], [inspected["run"], inspected["job"]],
                             [inspected["run"], inspected["job"]])

        def on_load(run_a: str | None, run_b: str | None, inspected_run: str | None,
                    config: str | None) -> tuple[Any, ...]:
            """Fresh run lists and configs; Compare and the inspector start on the latest runs."""
            fresh = ctx.run_choices()
            return (gr.update(choices=fresh), gr.update(choices=fresh),
                    gr.update(choices=fresh, value=preselect(run_a, fresh, 0)),
                    gr.update(choices=fresh, value=preselect(run_b, fresh, 1)),
                    gr.update(choices=fresh, value=preselect(inspected_run, fresh, 0)),
                    launched["rescan"](config))

        app.load(on_load, [compared["run_a"], compared["run_b"], inspected["run"], launched["config"]],
                 [launched["run"], browsed["run"], compared["run_a"], compared["run_b"], inspected["run"],
                  launched["config"]])
    app.trace_bench_context = ctx  # type: ignore[attr-defined] - tests and notebooks reach the launcher here
    return app


def launch_ui(runs_dir: str | Path = "runs", tasks_root: str | None = None, port: int | None = None,
              share: bool = False, configs_dir: str | Path | None = None, block: bool = True) -> int:
    """Serve the UI; returns 2 (like any missing extra) with a message when gradio is missing, 0 when
    the server stops."""
    try:
        import gradio  # noqa: F401
    except ImportError:
        print("trace-bench: error: the UI needs gradio: pip install 'trace-bench[ui]'", file=sys.stderr)
        return 2
    app = build_app(runs_dir, tasks_root, configs_dir)
    if share:
        print("trace-bench ui: --share publishes this UI on a public gradio.live link; anyone with the link "
              "can start runs on this machine", file=sys.stderr)
    app.queue(default_concurrency_limit=16)
    app.launch(server_name="127.0.0.1", server_port=port, share=share, inbrowser=False, show_error=False,
               prevent_thread_lock=not block, css=CSS)
    return 0

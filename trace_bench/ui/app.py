"""Build and serve the Gradio app (``trace-bench ui``).

The server binds 127.0.0.1 (``--share`` adds a public gradio.live link) and every request needs the
token printed at start-up (:mod:`trace_bench.ui.auth`).  Nothing secret is ever an initial value
or an output: the API key box starts empty, and every text that reaches the browser went
through the masking boundary in :mod:`trace_bench.ui.readers`.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from trace_bench.ui.auth import TokenGate, middleware
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
        compare_tab.select(compared["refresh_others"], compared["others"], compared["others"])
        inspector_tab.select(inspected["refresh"], [inspected["run"], inspected["job"]],
                             [inspected["run"], inspected["job"]])

        def on_load(config: str | None) -> tuple[Any, ...]:
            """Fresh run lists and configs; Compare and the inspector start on the runs that are the
            newest now (what the pickers held was computed when the server started)."""
            fresh = ctx.run_choices()
            return (gr.update(choices=fresh), gr.update(choices=fresh),
                    gr.update(choices=fresh, value=preselect(None, fresh, 0)),
                    gr.update(choices=fresh, value=preselect(None, fresh, 1)),
                    gr.update(choices=fresh, value=preselect(None, fresh, 0)),
                    launched["rescan"](config))

        app.load(on_load, [launched["config"]],
                 [launched["run"], browsed["run"], compared["run_a"], compared["run_b"], inspected["run"],
                  launched["config"]])
    app.trace_bench_context = ctx  # tests and notebooks reach the launcher here
    return app


def start_server(runs_dir: str | Path = "runs", tasks_root: str | None = None, port: int | None = None,
                 share: bool = False, configs_dir: str | Path | None = None,
                 no_token: bool = False) -> tuple[Any, TokenGate | None, str]:
    """Serve the UI in a background thread: (the Blocks, its token gate or None, the URL to open).

    The token middleware wraps the whole server app that Gradio builds (``app_kwargs``), so every
    route is behind it; ``--no-token`` is refused with ``--share`` (a public link)."""
    if no_token and share:
        raise ValueError("--no-token is only allowed on 127.0.0.1, not with --share")
    app = build_app(runs_dir, tasks_root, configs_dir)
    gate = None if no_token else TokenGate()
    app.queue(default_concurrency_limit=16)
    app.launch(server_name="127.0.0.1", server_port=port, share=share, inbrowser=False, show_error=False,
               prevent_thread_lock=True, css=CSS, quiet=True, enable_monitoring=False,
               app_kwargs={"middleware": [middleware(gate)]} if gate else None)
    if gate is not None:
        gate.close_startup()
    local = app.local_url or f"http://127.0.0.1:{app.server_port}/"
    app.trace_bench_gate = gate
    return app, gate, gate.url(local) if gate else local


def launch_ui(runs_dir: str | Path = "runs", tasks_root: str | None = None, port: int | None = None,
              share: bool = False, configs_dir: str | Path | None = None, block: bool = True,
              no_token: bool = False) -> int:
    """Serve the UI; returns 2 (like any missing extra) with a message when gradio is missing or the
    flags conflict, 0 when the server stops."""
    try:
        import gradio  # noqa: F401
    except ImportError:
        from trace_bench._util.availability import install_extra_hint

        print(f"trace-bench: error: the UI needs gradio ({install_extra_hint('ui')})", file=sys.stderr)
        return 2
    if no_token and share:
        print("trace-bench: error: --no-token: a token is required with --share (the link is public)",
              file=sys.stderr)
        return 2
    app, gate, url = start_server(runs_dir, tasks_root, port, share, configs_dir, no_token)
    print(f"trace-bench ui: open {url}", flush=True)
    if share and app.share_url:
        print("trace-bench ui: --share publishes this UI on a public gradio.live link; anyone with the link "
              "and the token can start runs on this machine", file=sys.stderr)
        print(f"trace-bench ui: public link {gate.url(app.share_url) if gate else app.share_url}", flush=True)
    if gate is None:
        print("trace-bench ui: warning: --no-token: any process or user on this machine can use this UI and "
              "start runs with this server's API keys", file=sys.stderr)
    if block:
        serve_until_stopped(app)
    return 0


def serve_until_stopped(app: Any) -> None:
    """Block until Ctrl-C, SIGTERM or SIGHUP (a closed terminal, an editor's or a supervisor's stop),
    then close the server and return, so the process exits 0: killed by SIGTERM it ended ``make ui``
    with "make: *** [Makefile: ui] Terminated".  Runs started from the UI keep going (their own
    sessions)."""
    import signal
    import threading

    def stop(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    handled = (signal.SIGTERM, signal.SIGHUP)
    main = threading.current_thread() is threading.main_thread()
    previous = {sig: signal.signal(sig, stop) for sig in handled} if main else {}
    try:
        app.block_thread()  # Gradio closes the server on KeyboardInterrupt
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)
    print("trace-bench ui: stopped", flush=True)

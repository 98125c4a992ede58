"""Launch tab: start a run in the background, follow it live, stop it, resume it.

The API key box is a password field that starts empty on every page load (never filled from the
environment), is cleared as soon as a run starts, and is never an output of any callback except
to clear it; the key travels only to the child process's environment.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from trace_bench.store.run_store import RunStore
from trace_bench.ui.context import UIContext, guarded
from trace_bench.ui.launcher import Launch, LaunchError, start_failure
from trace_bench.ui.live import progress_html
from trace_bench.ui.readers import (
    frame_of,
    leaderboard_display,
    markdown_text,
    read_leaderboard_rows,
    read_text,
    tail_lines,
)

MODES = ["config", "stub", "real"]
TICK_S = 1.0


def _positive(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number > 0 else None


def config_workers(text: str | None) -> int:
    """The ``max_workers`` a config's text asks for (``n_concurrent`` too), else the schema's default;
    the Launch tab shows it, so the field says how many job processes a Start would use."""
    import yaml

    from trace_bench.config.models import RunConfig

    default = int(RunConfig.model_fields["max_workers"].default)
    try:
        data = yaml.safe_load(text or "")
    except yaml.YAMLError:
        return default
    value = next((data[k] for k in ("max_workers", "n_concurrent") if k in data), None) \
        if isinstance(data, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) and value >= 1 else default


def workers_override(value: Any, config_value: int) -> int | None:
    """The ``--max-workers`` to pass: the field's number when the user changed it from the config's."""
    number = _positive(value)
    return int(number) if number is not None and int(number) != config_value else None


def finished_board(run_dir: str | None, state: str) -> Any:
    """The followed run's leaderboard once it has ended (hidden while it runs or when unreadable)."""
    import gradio as gr

    if not run_dir or state in ("starting", "running"):
        return gr.update(visible=False)
    rows, problem = read_leaderboard_rows(Path(run_dir))
    if problem or not rows:
        return gr.update(visible=False)
    return gr.update(value=frame_of(leaderboard_display(rows)), visible=True)


def build(ctx: UIContext) -> dict[str, Any]:
    """The tab: its layout (:func:`_layout`), then its events wired to the handlers that start,
    resume and stop runs (:func:`_launching`) and follow the shown one (:func:`_following`)."""
    import gradio as gr

    ui = _layout(ctx)
    on_start, on_resume, on_stop = _launching(ctx)
    on_tick = _following(ctx)

    def load_config(name: str | None) -> tuple[str, int]:
        text = ctx.config_text(name)
        return text, config_workers(text)

    def on_refresh(run_dir: str | None) -> Any:
        return gr.update(choices=ctx.run_choices(), value=run_dir)

    def on_rescan(name: str | None) -> Any:
        names = ctx.config_names()
        return gr.update(choices=names, value=name if name in names else None)

    ui.config_name.change(load_config, ui.config_name, [ui.editor, ui.workers])
    ui.start.click(on_start, [ui.editor, ui.mode, ui.workers, ui.timeout, ui.api_key, ui.state],
                   [ui.message, ui.api_key, ui.state, ui.progress])
    ui.resume.click(on_resume, [ui.run, ui.workers, ui.timeout, ui.api_key, ui.state],
                    [ui.message, ui.api_key, ui.state, ui.progress])
    ui.stop.click(on_stop, [ui.run, ui.state], [ui.message])
    ui.timer.tick(on_tick, [ui.state, ui.run], [ui.progress, ui.log, ui.run, ui.state, ui.message, ui.stop, ui.board],
                  show_progress="hidden")
    ui.refresh.click(on_refresh, ui.run, ui.run)
    ui.rescan.click(on_rescan, ui.config_name, ui.config_name)
    return {"run": ui.run, "refresh": on_refresh, "config": ui.config_name, "rescan": on_rescan}


def _layout(ctx: UIContext) -> SimpleNamespace:
    """The tab's components, placed; no event is wired here."""
    import gradio as gr

    ui = SimpleNamespace()
    names = ctx.config_names()
    default = "smoke.yaml" if "smoke.yaml" in names else (names[0] if names else None)
    with gr.Row():
        with gr.Column(scale=3):
            with gr.Row():
                ui.config_name = gr.Dropdown(names, value=default, label="Config (from configs/)", scale=5,
                                             elem_id="tb-config")
                ui.rescan = gr.Button("Rescan configs/", scale=1, elem_id="tb-config-rescan")
            ui.editor = gr.Code(ctx.config_text(default), language="yaml", interactive=True, lines=14, max_lines=30,
                                label="Config YAML (edit freely; Start uses this text)", elem_id="tb-editor")
        with gr.Column(scale=2):
            ui.mode = gr.Radio(MODES, value="config", label="Mode (config = keep the config's mode)",
                               elem_id="tb-mode")
            with gr.Row():
                ui.workers = gr.Number(config_workers(ctx.config_text(default)), precision=0, minimum=1,
                                       label="max_workers (the config's; change to override)", elem_id="tb-workers")
                ui.timeout = gr.Number(0, minimum=0, label="job_timeout s (0 = config)", elem_id="tb-timeout")
            ui.api_key = gr.Textbox("", type="password", label="API key (optional, real mode)",
                                    info="Sent only to the run process, as the variable named by llm.api_key_env "
                                         "(default OPENAI_API_KEY). Never stored or shown.",
                                    placeholder="leave empty to use the server's environment",
                                    elem_id="tb-api-key")
            with gr.Row():
                ui.start = gr.Button("Start", variant="primary", elem_id="tb-start")
                ui.stop = gr.Button("Stop", variant="stop", interactive=False, elem_id="tb-stop")
                ui.resume = gr.Button("Resume", elem_id="tb-resume")
            ui.message = gr.Markdown("", elem_id="tb-launch-message")
    with gr.Row():
        ui.run = gr.Dropdown(ctx.run_choices(), value=None, label="Run shown below (Stop/Resume act on it)",
                             elem_id="tb-follow-run", scale=5)
        ui.refresh = gr.Button("Refresh runs", scale=1, elem_id="tb-launch-refresh")
    ui.progress = gr.HTML(progress_html(None), elem_id="tb-progress-box")
    ui.board = gr.Dataframe(visible=False, interactive=False, max_height=360, elem_id="tb-launch-leaderboard",
                            label="Leaderboard of the run (ranked by the verdict's paired test; written when it ended)")
    ui.log = gr.Code("", language=None, lines=8, max_lines=14, interactive=False, label="Driver output (tail)",
                     elem_id="tb-driver-log")
    ui.state = gr.State({"launch": None, "pending": False, "stoppable": False})
    ui.timer = gr.Timer(TICK_S)
    return ui


def _launching(ctx: UIContext) -> tuple[Callable[..., Any], Callable[..., Any], Callable[..., Any]]:
    """The Start, Resume and Stop handlers."""
    import gradio as gr

    @guarded(4, 0)
    def on_start(text: str, mode_value: str, max_workers: Any, job_timeout: Any, key: str,
                 current: dict[str, Any]) -> tuple[Any, ...]:
        try:
            launch = ctx.launcher.start(text, mode=None if mode_value == "config" else mode_value,
                                        max_workers=workers_override(max_workers, config_workers(text)),
                                        job_timeout=_positive(job_timeout), api_key=key or None)
        except LaunchError as exc:
            return f"**Not started:** {markdown_text(str(exc))}", "", current, gr.skip()
        note = "with the API key you typed" if key and key.strip() else "with the server's environment"
        return (f"Started launch `{launch.launch_id}` {note}.", "",
                {**current, "launch": launch.launch_id, "pending": True}, progress_html(None, "starting…"))

    @guarded(4, 0)
    def on_resume(run_dir: str | None, max_workers: Any, job_timeout: Any, key: str,
                  current: dict[str, Any]) -> tuple[Any, ...]:
        if not run_dir:
            return "Pick a run to resume first.", "", current, gr.skip()
        try:
            snapshot = read_text(RunStore(Path(run_dir)).snapshot_path)
            launch = ctx.launcher.resume(run_dir, max_workers=workers_override(max_workers, config_workers(snapshot)),
                                         job_timeout=_positive(job_timeout), api_key=key or None)
        except LaunchError as exc:
            return f"**Not resumed:** {markdown_text(str(exc))}", "", current, gr.skip()
        return (f"Resuming `{Path(run_dir).name}` (launch `{launch.launch_id}`).", "",
                {**current, "launch": launch.launch_id, "pending": False}, gr.skip())

    @guarded(1, 0)
    def on_stop(run_dir: str | None, current: dict[str, Any]) -> str:
        launch = stoppable_launch(ctx, run_dir, current)
        if launch is None:
            return "No run started from this UI is running" + (f" for `{Path(run_dir).name}`." if run_dir else ".")
        ctx.launcher.stop(launch)
        return (f"Stop requested for `{(launch.run_dir or Path('?')).name}`: running jobs are killed and recorded "
                "as interrupted; Resume continues the run.")

    return on_start, on_resume, on_stop


def _following(ctx: UIContext) -> Callable[..., Any]:
    """The timer's handler: the followed launch's or shown run's progress, driver log, run label,
    Stop button and (once the run ended) leaderboard."""
    import gradio as gr

    @guarded(7, None)
    def on_tick(current: dict[str, Any], run_dir: str | None) -> tuple[Any, ...]:
        given = current
        progress, log, run_update, current, message = _follow(current, run_dir)
        board_update: Any = gr.skip()
        if current.get("shown") != current.get("boarded") or run_dir != current.get("board_run"):
            board_update = finished_board(run_dir, (current.get("shown") or ["starting"])[0])
            current = {**current, "boarded": current.get("shown"), "board_run": run_dir}
        stoppable = stoppable_launch(ctx, run_dir, current) is not None
        stop_update: Any = gr.skip()
        if stoppable != current.get("stoppable"):
            current = {**current, "stoppable": stoppable}
            stop_update = gr.update(interactive=stoppable)
        # A tick that changed nothing leaves the state alone: returning the copy it read would undo
        # a Start that landed while it ran (the new launch would never be followed).
        state_update = gr.skip() if current is given else current
        return progress, log, run_update, state_update, message, stop_update, board_update

    def _follow(current: dict[str, Any], run_dir: str | None) -> tuple[Any, ...]:
        launch = ctx.launcher.get(current.get("launch"))
        run_update: Any = gr.skip()
        if launch is not None and current.get("pending"):
            resolved = launch.resolve_run_dir()
            if resolved is not None:
                run_dir = str(resolved)
                run_update = gr.update(choices=ctx.run_choices(), value=run_dir)
                current = {**current, "pending": False}
            elif not launch.alive:
                current = {**current, "pending": False}
                reason = start_failure(launch)
                return (progress_html(None, "the run did not start"), _log(launch), run_update, current,
                        f"**Not started:** {markdown_text(reason)}")
            else:
                return progress_html(None, "starting…"), _log(launch), run_update, current, gr.skip()
        if not run_dir:
            return progress_html(None), _log(launch), run_update, current, gr.skip()
        shown = ctx.launcher.for_run(run_dir, alive_only=False)
        note = ctx.launcher.describe(shown) if shown is not None else "not started from this UI"
        progress = ctx.progress(run_dir).read()
        if (progress.state, note) != tuple(current.get("shown") or ()):  # relabel the run when its state changes
            current = {**current, "shown": [progress.state, note]}
            run_update = gr.update(choices=ctx.run_choices(), value=run_dir)
        return progress_html(progress, note), _log(shown), run_update, current, gr.skip()

    return on_tick


def stoppable_launch(ctx: UIContext, run_dir: str | None, current: dict[str, Any]) -> Launch | None:
    """The live launch that Stop would act on: the shown run's, else this page's own; None when
    nothing started from this UI is running (Stop is then disabled)."""
    launch = ctx.launcher.for_run(run_dir) if run_dir else None
    own = ctx.launcher.get(current.get("launch"))
    if launch is None and own is not None and own.alive:
        launch = own
    return launch


def _log(launch: Launch | None) -> str:
    return tail_lines(launch.log_path, 40) if launch is not None else ""

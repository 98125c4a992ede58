"""Compare tab: two runs paired cell by cell (or the reason they cannot be compared fairly), any two arms
of one run, and any number of runs overlaid.  The views are :mod:`trace_bench.ui.compare_views`."""

from __future__ import annotations

from typing import Any

from trace_bench.ui.compare_views import (
    ARM_COLUMNS,
    COLUMNS,
    OVERLAY_COLUMNS,
    arm_choices,
    compare_arms_table,
    compare_table,
    overlay,
)
from trace_bench.ui.context import UIContext, guarded, preselect
from trace_bench.ui.plots import AXES
from trace_bench.ui.readers import frame_of

__all__ = ["build", "compare_table"]


def build(ctx: UIContext) -> dict[str, Any]:
    """The tab's three views; ``refresh`` (two-run pickers) and ``refresh_others`` (the run pickers of
    the other two views) renew the run lists when the tab is opened."""
    import gradio as gr

    found = _build_runs(ctx)
    found["others"] = [_build_arms(ctx), _build_overlay(ctx)]

    def refresh_others(run: str | None, selected: list[str] | None) -> tuple[Any, ...]:
        fresh = ctx.run_choices()
        known = {value for _, value in fresh}
        return (gr.update(choices=fresh, value=run if run in known else None),
                gr.update(choices=fresh, value=[r for r in selected or [] if r in known]))

    found["refresh_others"] = refresh_others
    return found


def _build_runs(ctx: UIContext) -> dict[str, Any]:
    import gradio as gr
    import pandas as pd

    choices = ctx.run_choices()
    gr.Markdown("#### Two runs, cell by cell")
    # No value until the page loads: the load event picks the two newest runs of that moment.  A
    # value computed here (when the server started) came back when the tab's own refresh, sent
    # with the values the page held before the load's answer, was answered after it.
    with gr.Row():
        run_a = gr.Dropdown(choices, value=None, label="Run A (newest first)", elem_id="tb-compare-a")
        run_b = gr.Dropdown(choices, value=None, label="Run B", elem_id="tb-compare-b")
    with gr.Row():
        compare = gr.Button("Compare", variant="primary", elem_id="tb-compare-btn")
        refresh = gr.Button("Refresh runs", elem_id="tb-compare-refresh")
    message = gr.Markdown("Pick two runs of the same matrix that differ in one axis (e.g. model or seeds).",
                          elem_id="tb-compare-message")
    table = gr.Dataframe(pd.DataFrame(columns=COLUMNS), label="Paired differences (A - B) per arm",
                         interactive=False, elem_id="tb-compare-table")
    text = gr.Code("", language=None, interactive=False, label="As printed by trace-bench compare",
                   elem_id="tb-compare-text")

    @guarded(3, 0)
    def on_compare(a: str | None, b: str | None) -> tuple[Any, ...]:
        note, rows, printed = compare_table(a or "", b or "")
        return note, frame_of(rows, COLUMNS) if rows else pd.DataFrame(columns=COLUMNS), printed

    def on_refresh(a: str | None, b: str | None) -> tuple[Any, ...]:
        fresh = ctx.run_choices()
        return (gr.update(choices=fresh, value=preselect(a, fresh, 0)),
                gr.update(choices=fresh, value=preselect(b, fresh, 1)))

    compare.click(on_compare, [run_a, run_b], [message, table, text])
    refresh.click(on_refresh, [run_a, run_b], [run_a, run_b])
    return {"run_a": run_a, "run_b": run_b, "refresh": on_refresh}


def _build_arms(ctx: UIContext) -> Any:
    import gradio as gr
    import pandas as pd

    gr.Markdown("#### Two arms of one run (decided as the leaderboard decides)")
    with gr.Row():
        run = gr.Dropdown(ctx.run_choices(), value=None, label="Run", elem_id="tb-arms-run")
        arm_a = gr.Dropdown([], value=None, label="Arm A", elem_id="tb-arms-a")
        arm_b = gr.Dropdown([], value=None, label="Arm B", elem_id="tb-arms-b")
    button = gr.Button("Compare arms", elem_id="tb-arms-btn")
    message = gr.Markdown("", elem_id="tb-arms-message")
    table = gr.Dataframe(pd.DataFrame(columns=ARM_COLUMNS), label="A - B per task", interactive=False,
                         elem_id="tb-arms-table")

    @guarded(2, None)
    def on_run(run_dir: str | None) -> tuple[Any, ...]:
        arms = arm_choices(run_dir)
        return (gr.update(choices=arms, value=arms[0] if arms else None),
                gr.update(choices=arms, value=arms[1] if len(arms) > 1 else None))

    @guarded(2, 0)
    def on_compare(run_dir: str | None, a: str | None, b: str | None) -> tuple[Any, ...]:
        note, rows, _ = compare_arms_table(run_dir or "", a or "", b or "")
        return note, frame_of(rows, ARM_COLUMNS) if rows else pd.DataFrame(columns=ARM_COLUMNS)

    run.change(on_run, run, [arm_a, arm_b])
    button.click(on_compare, [run, arm_a, arm_b], [message, table])
    return run


def _build_overlay(ctx: UIContext) -> Any:
    import gradio as gr
    import pandas as pd

    from trace_bench.ui.tabs.browse import curve_chart

    gr.Markdown("#### Runs overlaid")
    with gr.Row():
        runs = gr.Dropdown(ctx.run_choices(), value=[], multiselect=True, label="Runs", elem_id="tb-overlay-runs",
                           scale=4)
        axis = gr.Radio([(v, k) for k, v in AXES.items() if k != "step"], value="llm_calls", label="x axis",
                        elem_id="tb-overlay-axis", scale=3)
    button = gr.Button("Overlay", elem_id="tb-overlay-btn")
    message = gr.Markdown("", elem_id="tb-overlay-message")
    curves = gr.Plot(None, show_label=False, elem_id="tb-overlay-curves")
    table = gr.Dataframe(pd.DataFrame(columns=OVERLAY_COLUMNS), label="Each run's leaderboard", interactive=False,
                         elem_id="tb-overlay-table")

    @guarded(3, 0)
    def on_overlay(selected: list[str] | None, axis_value: str) -> tuple[Any, ...]:
        note, frame, rows = overlay(list(selected or []), axis_value)
        chart = curve_chart(frame, axis_value, "mean per trainer") if frame is not None else None
        return note, chart, frame_of(rows, OVERLAY_COLUMNS) if rows else pd.DataFrame(columns=OVERLAY_COLUMNS)

    button.click(on_overlay, [runs, axis], [message, curves, table])
    return runs

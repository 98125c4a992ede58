"""Browse tab: runs newest first, a run's summary and integrity audit, filtered results, leaderboard
(ranked by the verdict: ties as ties), the verdict across tasks on request, interactive curves (the
selection split's best score, labelled so), the params variants in parallel coordinates, the
cost–quality frontier per task, report."""

from __future__ import annotations

import html
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from trace_bench.store.columns import RESULT_COLUMNS as RESULT_TABLE_COLUMNS
from trace_bench.store.models import Spend
from trace_bench.store.run_store import RunStore
from trace_bench.ui.context import ALL, UIContext, choice_list, guarded
from trace_bench.ui.discovery import run_info
from trace_bench.ui.integrity import integrity_markdown
from trace_bench.ui.interactive import curve_figure, message_figure
from trace_bench.ui.params_view import params_figure
from trace_bench.ui.plots import AXES, equal_spend_section, frontier_html, reach_html, run_curve_frame
from trace_bench.ui.readers import (
    frame_of,
    labelled_results,
    leaderboard_display,
    markdown_text,
    masked,
    read_json,
    read_leaderboard_rows,
    read_result_rows,
    read_text,
)
from trace_bench.ui.verdict import verdict_html

#: the results table shows every column of the job record (``store.columns``), in its order
RESULT_COLUMNS = [column.name for column in RESULT_TABLE_COLUMNS]
RUN_COLUMNS = ["run_id", "created", "jobs", "finished", "state", "counts", "problem"]
GROUPS = {"mean per trainer": "trainer", "per job": "job"}
#: the curves plot the only score measured at every step; the verdict compares a held-out one
CURVE_Y_LABEL = "best score so far, selection split (optimistic)"
STUB_LINE = ("**Stub mode:** a deterministic stub answered every LLM call: tokens count its answers and USD is 0; "
             "nothing here measures a real model.")


def curve_chart(frame: Any, axis: str, group: str) -> Any:
    """The Browse chart (a plotly figure): best score so far against ``axis``, per job or averaged
    over seeds, one panel per task (tasks score on scales of their own: one axis flattened all but
    the widest)."""
    per_job = GROUPS.get(group) == "job"
    title = f"best score so far vs {AXES.get(axis, axis)}" + ("" if per_job else " (mean over seeds)")
    if axis == Spend.COST and frame is not None and len(frame) and float(frame["x"].abs().max()) == 0.0:
        return message_figure(title, "No USD curve: every job of this selection cost 0 USD<br>(stub mode calls "
                              "cost nothing; in real mode, the model's price is unknown: set llm.prices).<br>"
                              "Pick LLM calls or tokens.")
    return curve_figure(frame, title=title, x_label=AXES.get(axis, axis), y_label=CURVE_Y_LABEL)


def summary_markdown(run_dir: Path) -> str:
    info = run_info(run_dir)
    summary, problem = read_json(RunStore(run_dir).summary_path)
    lines = [f"### {markdown_text(info.run_id)}", f"state **{info.state}** · created {info.created[:19]} · "
             f"{info.total_jobs} jobs"]
    if info.problem:
        lines.append(f"**Problem:** {markdown_text(info.problem)}")
    if isinstance(summary, dict):
        tokens = summary.get("token_totals") or {}
        counts = ", ".join(f"{k}: {v}" for k, v in sorted((summary.get("counts") or {}).items()))
        lines.append(f"mode {summary.get('mode', '?')} · finished {summary.get('finished_jobs', '?')} · {counts}")
        lines.append(f"LLM calls {summary.get('llm_calls', 0)} · tokens {tokens.get('total', 0):,} "
                     f"(prompt {tokens.get('prompt', 0):,}, completion {tokens.get('completion', 0):,}) · "
                     f"USD {float(summary.get('cost_usd') or 0):.4f} · job time {summary.get('job_seconds', 0):.1f} s")
        if summary.get("mode") == "stub":
            lines.append(STUB_LINE)
    else:
        lines.append(f"summary.json: {markdown_text(problem or 'not an object')}")
    return "\n\n".join(masked(line) for line in lines)


def filtered_rows(run_dir: Path, task: str, trainer: str, status: str) -> tuple[list[dict[str, Any]], str | None]:
    rows, problem = read_result_rows(run_dir)
    rows = labelled_results(rows)
    wanted = {"task": task, "trainer": trainer, "status": status}
    keep = [r for r in rows if all(v in (None, "", ALL) or r.get(k) == v for k, v in wanted.items())]
    return keep, problem


def build(ctx: UIContext) -> dict[str, Any]:
    """The tab: its layout (:func:`_layout`), then its events wired to the handlers of :func:`_handlers`."""
    ui = _layout(ctx)
    on = _handlers(ctx)
    outputs = [ui.summary, ui.snapshot, ui.environment, ui.task, ui.trainer, ui.status, ui.results, ui.leaderboard,
               ui.curves, ui.frontier, ui.integrity, ui.params]
    ui.run.change(on.run, [ui.run, ui.axis, ui.group], outputs)
    filters = [ui.run, ui.task, ui.trainer, ui.status, ui.axis, ui.group]
    for control in (ui.task, ui.trainer, ui.status, ui.axis, ui.group):
        control.input(on.filter, filters, [ui.summary, ui.results, ui.curves])
    ui.report.click(on.report, ui.run, [ui.report_message, ui.report_file, ui.report_view, ui.summary])
    ui.verdict_button.click(lambda run_dir: verdict_html(Path(run_dir)) if run_dir else "Pick a run first.", ui.run,
                            ui.verdict)
    ui.refresh.click(on.refresh, ui.run, [ui.run, ui.runs_table, ui.summary])
    return {"run": ui.run, "runs_table": ui.runs_table, "refresh": on.refresh,
            "refresh_outputs": [ui.run, ui.runs_table, ui.summary]}


def _layout(ctx: UIContext) -> SimpleNamespace:
    """The tab's components, placed; no event is wired here."""
    import gradio as gr
    import pandas as pd

    ui = SimpleNamespace()
    with gr.Row():
        ui.refresh = gr.Button("Refresh", scale=1, elem_id="tb-browse-refresh")
        ui.run = gr.Dropdown(ctx.run_choices(), value=None, label="Run", scale=6, elem_id="tb-browse-run")
    ui.runs_table = gr.Dataframe(frame_of([r.row() for r in ctx.list_runs()], RUN_COLUMNS),
                                 label="Runs (newest first)", interactive=False, max_height=240, elem_id="tb-runs-table")
    ui.summary = gr.Markdown("Pick a run.", elem_id="tb-summary")
    ui.integrity = gr.Markdown("", elem_id="tb-integrity")
    with gr.Accordion("Config snapshot and environment", open=False):
        ui.snapshot = gr.Code("", language="yaml", interactive=False, label="meta/config.snapshot.yaml")
        ui.environment = gr.Code("", language="json", interactive=False, label="meta/env.json (secrets masked)")
    with gr.Row():
        ui.task = gr.Dropdown([ALL], value=ALL, label="Task", elem_id="tb-filter-task")
        ui.trainer = gr.Dropdown([ALL], value=ALL, label="Trainer", elem_id="tb-filter-trainer")
        ui.status = gr.Dropdown([ALL], value=ALL, label="Status", elem_id="tb-filter-status")
    ui.results = gr.Dataframe(pd.DataFrame(columns=RESULT_COLUMNS), label="results.csv (filtered)", interactive=False,
                              max_height=320, elem_id="tb-results")
    ui.leaderboard = gr.Dataframe(pd.DataFrame(), label="leaderboard.csv (per task, ranked by the verdict's paired "
                                  "test: arms it cannot separate from the best share its rank, vs_best tied)",
                                  interactive=False, max_height=260, elem_id="tb-leaderboard")
    with gr.Accordion("Verdict across tasks (rliable, autorank, baycomp; takes a few seconds)", open=False):
        ui.verdict_button = gr.Button("Compute the verdict", elem_id="tb-verdict-btn")
        ui.verdict = gr.HTML("", elem_id="tb-verdict")
    with gr.Row():
        ui.axis = gr.Radio([(v, k) for k, v in AXES.items() if k != "step"], value="llm_calls", label="x axis",
                           elem_id="tb-axis")
        ui.group = gr.Radio(list(GROUPS), value="mean per trainer", label="Curves", elem_id="tb-group")
    ui.curves = gr.Plot(curve_chart(None, "llm_calls", "mean per trainer"), show_label=False, elem_id="tb-browse-curves")
    with gr.Accordion("Params variants (parallel coordinates: drag along an axis to filter, sideways to reorder)",
                      open=False):
        ui.params = gr.Plot(None, show_label=False, elem_id="tb-params")
    with gr.Accordion("Cost–quality frontier (per task: arms no other arm beats on both mean cost and score) and "
                      "cost to reach the best known value", open=True):
        ui.frontier = gr.HTML("", elem_id="tb-browse-frontier")
    with gr.Row():
        ui.report = gr.Button("Generate report.html", elem_id="tb-report")
        ui.report_file = gr.File(label="report.html", interactive=False, elem_id="tb-report-file")
    ui.report_message = gr.Markdown("", elem_id="tb-report-message")
    ui.report_view = gr.HTML("", elem_id="tb-report-view")
    return ui


def _curve_frame(run_dir: str, rows: list[dict[str, Any]] | None, axis_value: str, group_value: str) -> Any:
    job_ids = [r["job_id"] for r in rows] if rows is not None else None
    frame = run_curve_frame(Path(run_dir), axis_value, GROUPS.get(group_value, "trainer"), job_ids)
    return curve_chart(frame, axis_value, group_value)


def _handlers(ctx: UIContext) -> SimpleNamespace:
    """The tab's event handlers: a run picked, a filter changed, the report asked for, the runs refreshed."""
    import gradio as gr
    import pandas as pd

    @guarded(12, 0)
    def on_run(run_dir: str | None, axis_value: str, group_value: str) -> tuple[Any, ...]:
        if not run_dir:
            return ("Pick a run.", "", "", gr.update(choices=[ALL], value=ALL), gr.update(choices=[ALL], value=ALL),
                    gr.update(choices=[ALL], value=ALL), pd.DataFrame(columns=RESULT_COLUMNS), pd.DataFrame(),
                    curve_chart(None, axis_value, group_value), "", "", None)
        path = Path(run_dir)
        store = RunStore(path)
        rows, problem = read_result_rows(path)
        rows = labelled_results(rows)
        board, board_problem = read_leaderboard_rows(path)
        board = leaderboard_display(board)
        text = summary_markdown(path)
        if problem:
            text += f"\n\nresults.csv: {markdown_text(problem)}"
        return (text, read_text(store.snapshot_path), read_text(store.env_path),
                gr.update(choices=choice_list(r.get("task") for r in rows), value=ALL),
                gr.update(choices=choice_list(r.get("trainer") for r in rows), value=ALL),
                gr.update(choices=choice_list(r.get("status") for r in rows), value=ALL),
                frame_of(rows, RESULT_COLUMNS), frame_of(board) if not board_problem else pd.DataFrame(),
                _curve_frame(run_dir, None, axis_value, group_value),
                frontier_html(path) + reach_html(path) + equal_spend_section(path),
                integrity_markdown(path), params_figure(board if not board_problem else []))

    @guarded(3, 0)
    def on_filter(run_dir: str | None, task_value: str, trainer_value: str, status_value: str, axis_value: str,
                  group_value: str) -> tuple[Any, ...]:
        if not run_dir:
            return gr.skip(), pd.DataFrame(columns=RESULT_COLUMNS), curve_chart(None, axis_value, group_value)
        rows, _ = filtered_rows(Path(run_dir), task_value, trainer_value, status_value)
        filtered = any(v not in (None, ALL) for v in (task_value, trainer_value, status_value))
        return gr.skip(), frame_of(rows, RESULT_COLUMNS), _curve_frame(run_dir, rows if filtered else None,
                                                                        axis_value, group_value)

    @guarded(4, 0)
    def on_report(run_dir: str | None) -> tuple[Any, ...]:
        if not run_dir:
            return "Pick a run first.", None, "", gr.skip()
        try:
            from trace_bench.analysis import RunDirError, write_report
        except ImportError as exc:
            return f"report.html needs the analysis extra (pandas, scipy): {exc}", None, "", gr.skip()
        try:
            path = write_report([run_dir])
        except RunDirError as exc:
            return f"**Cannot build the report:** {markdown_text(str(exc))}", None, "", gr.skip()
        page = read_text(path, limit=None)
        frame = (f'<iframe title="report.html" style="width:100%;height:640px;border:1px solid #ddd" '
                 f'srcdoc="{html.escape(page, quote=True)}"></iframe>')
        return f"Wrote `{masked(str(path))}` (shown below; download it above).", str(path), frame, gr.skip()

    @guarded(3, None)
    def on_refresh(run_dir: str | None) -> tuple[Any, ...]:
        infos = ctx.list_runs()
        choices = [(i.label, str(i.run_dir)) for i in infos]
        keep = run_dir if run_dir in {c[1] for c in choices} else (choices[0][1] if choices else None)
        return gr.update(choices=choices, value=keep), frame_of([i.row() for i in infos], RUN_COLUMNS), gr.skip()

    return SimpleNamespace(run=on_run, filter=on_filter, report=on_report, refresh=on_refresh)

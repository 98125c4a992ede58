"""Job inspector: one job's meta, results, curve, events, stdout, its LLM transcript as a
conversation per step beside the state that step produced (:mod:`trace_bench.ui.transcript_view`),
and a diff between any two of its states (:mod:`trace_bench.ui.state_diff`), followed live.

While "Follow live" is on, a timer re-reads the job's files; when none of them changed since the
last tick it sends nothing (``gr.skip``), so following an idle or finished job costs a few stats.
The step and the two states picked stay picked while the job grows.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace
from typing import Any

from trace_bench.store.run_store import RunStore
from trace_bench.ui.chart import line_chart
from trace_bench.ui.context import UIContext, guarded, preselect
from trace_bench.ui.discovery import job_choices, job_entries
from trace_bench.ui.plots import AXES, job_curve_frame
from trace_bench.ui.readers import (
    file_stamp,
    json_text,
    markdown_text,
    masked,
    read_json,
    tail_lines,
)
from trace_bench.ui.state_diff import diff_html, state_choices
from trace_bench.ui.transcript_view import conversation_html, step_choices

TICK_S = 1.5


def job_files(run_dir: Path, job_id: str) -> dict[str, Path]:
    job = RunStore(run_dir).job(job_id)
    files = {"meta": job.meta_path, "results": job.results_path, "events": job.events_path,
             "stdout": job.stdout_path, "curve": job.curve_path, "transcript": job.transcript_path,
             "history": job.state_history_path}
    files.update({kind: job.state_path(kind) for kind in ("initial", "best", "final")})
    return files


def job_header(run_dir: Path, job_id: str) -> str:
    entry = next((e for e in job_entries(run_dir) if e["job_id"] == job_id), {"job_id": job_id})
    job = RunStore(run_dir).job(job_id)
    results, _ = read_json(job.results_path)
    line = (f"### {job_id} · {entry.get('task', '?')} × {entry.get('trainer', '?')} "
            f"({entry.get('params_label', 'default')}) seed {entry.get('seed', '?')} · **{entry.get('status')}**")
    if isinstance(results, dict):
        def fmt(key: str) -> str:
            value = results.get(key)
            return "-" if value is None else f"{value:.4g}" if isinstance(value, float) else str(value)

        line += (f"\n\ninitial {fmt('score_initial')} → best {fmt('score_best')} (final {fmt('score_final')}, "
                 f"test {fmt('score_test')}) · steps {fmt('n_steps')} · LLM calls {fmt('llm_calls')} · "
                 f"tokens {fmt('total_tokens')} · USD {fmt('cost_usd')} · {fmt('time_seconds')} s")
        if results.get("error"):
            line += f"\n\n**Error:** {markdown_text(str(results['error'])[:500])}"
    elif not job.exists():
        line += "\n\n(the job has not started yet)"
    return masked(line)


def job_view(run_dir: Path, job_id: str, axis: str) -> tuple[Any, ...]:
    """The inspector's outputs for one job's files (header, meta, results, curve, events, stdout)."""
    files = job_files(run_dir, job_id)
    return (job_header(run_dir, job_id), json_text(files["meta"]), json_text(files["results"]),
            line_chart(job_curve_frame(run_dir, job_id, axis), title="score and best score so far",
                       x_label=AXES.get(axis, axis), y_label="score", dashed=frozenset({"score"})),
            tail_lines(files["events"], 60),
            tail_lines(files["stdout"], 200))


def inspection(run_dir: Path, job_id: str, step: str | None, before: str | None,
               after: str | None) -> tuple[Any, ...]:
    """The transcript and diff outputs (step picker, conversation, the two state pickers, the diff):
    the picks kept while they still exist, else the latest step and initial → best."""
    import gradio as gr

    job = RunStore(run_dir).job(job_id)
    steps, latest = step_choices(job)
    step = step if step in [value for _, value in steps] else latest
    states = state_choices(job)
    keys = [value for _, value in states]
    before = before if before in keys else next((k for k in ("initial", *keys) if k in keys), None)
    after = after if after in keys else next((k for k in ("best", "final", *reversed(keys)) if k in keys), None)
    return (gr.update(choices=steps, value=step), conversation_html(job, step),
            gr.update(choices=states, value=before), gr.update(choices=states, value=after),
            diff_html(job, before, after))


def build(ctx: UIContext) -> dict[str, Any]:
    """The tab: its layout (:func:`_layout`), then its events wired to the handlers of
    :func:`_handlers`."""
    ui = _layout(ctx)
    view = [ui.header, ui.meta, ui.results, ui.curve, ui.events, ui.stdout]
    inspect = [ui.step, ui.conversation, ui.before, ui.after, ui.diff]
    outputs = [*view, *inspect, ui.stamp]
    on = _handlers(ctx, len(outputs))
    ui.run.change(on.run, ui.run, [ui.job, ui.stamp])
    ui.job.change(on.job, [ui.run, ui.job, ui.axis], outputs)
    ui.axis.input(on.view, [ui.run, ui.job, ui.axis, ui.step, ui.before, ui.after], outputs)
    ui.step.input(on.step, [ui.run, ui.job, ui.step], ui.conversation)
    ui.before.input(on.diff, [ui.run, ui.job, ui.before, ui.after], ui.diff)
    ui.after.input(on.diff, [ui.run, ui.job, ui.before, ui.after], ui.diff)
    ui.timer.tick(on.tick, [ui.run, ui.job, ui.axis, ui.follow, ui.stamp, ui.step, ui.before, ui.after], outputs,
                  show_progress="hidden")
    ui.refresh.click(on.refresh, [ui.run, ui.job], [ui.run, ui.job])
    return {"run": ui.run, "job": ui.job, "refresh": on.refresh}


def _layout(ctx: UIContext) -> SimpleNamespace:
    """The tab's components, placed; no event is wired here."""
    import gradio as gr

    ui = SimpleNamespace()
    # the run and the job each get a whole row: their labels (run id, date, counts; job id, task,
    # trainer and params) were cut off when they shared one
    with gr.Row():
        ui.run = gr.Dropdown(ctx.run_choices(), value=None, label="Run (the newest is picked on load)", scale=6,
                             elem_id="tb-inspect-run")
        ui.follow = gr.Checkbox(True, label="Follow live", scale=1, min_width=120, elem_id="tb-follow")
        ui.refresh = gr.Button("Refresh", scale=1, min_width=120, elem_id="tb-inspect-refresh")
    # a timer tick may still carry the previous run's job while the run changes: not an error
    ui.job = gr.Dropdown([], value=None, label="Job", elem_id="tb-inspect-job", allow_custom_value=True)
    ui.header = gr.Markdown("Pick a run and a job.", elem_id="tb-job-header")
    ui.axis = gr.Radio([(v, k) for k, v in AXES.items()], value="step", label="x axis", elem_id="tb-job-axis")
    ui.curve = gr.HTML(line_chart(None, title="score and best score", x_label="step", y_label="score"),
                       elem_id="tb-job-curve")
    with gr.Row():
        ui.events = gr.Code("", language="json", interactive=False, lines=12, max_lines=20,
                            label="events.jsonl (tail)", elem_id="tb-job-events")
        ui.stdout = gr.Code("", language="shell", interactive=False, lines=12, max_lines=20,
                            label="stdout.log (tail)", elem_id="tb-job-stdout")
    gr.Markdown("#### LLM transcript: a step's calls beside the state they led to")
    ui.step = gr.Dropdown([], value=None, label="Step", elem_id="tb-transcript-step")
    ui.conversation = gr.HTML("", elem_id="tb-transcript")
    gr.Markdown("#### What changed between two states")
    with gr.Row():
        ui.before = gr.Dropdown([], value=None, label="From state", elem_id="tb-diff-from")
        ui.after = gr.Dropdown([], value=None, label="To state", elem_id="tb-diff-to")
    ui.diff = gr.HTML("", elem_id="tb-state-diff")
    with gr.Row():
        ui.meta = gr.Code("", language="json", interactive=False, max_lines=20, label="job_meta.json")
        ui.results = gr.Code("", language="json", interactive=False, max_lines=20, label="results.json")
    ui.stamp = gr.State(None)
    ui.timer = gr.Timer(TICK_S)
    return ui


def _handlers(ctx: UIContext, n_outputs: int) -> SimpleNamespace:
    """The tab's event handlers; ``n_outputs``: the components a whole view fills (header, files,
    curve, transcript and diff pickers, the files' stamp)."""
    import gradio as gr

    def blank(message: str) -> tuple[Any, ...]:
        return (message, "", "", line_chart(None, title="score", x_label="step", y_label="score"), "", "",
                gr.update(choices=[], value=None), "", gr.update(choices=[], value=None),
                gr.update(choices=[], value=None), "")

    @guarded(2, None)
    def on_run(run_dir: str | None) -> tuple[Any, ...]:
        choices = job_choices(run_dir)
        if not choices:
            return gr.update(choices=[], value=None), None
        entries = job_entries(Path(run_dir)) if run_dir else []
        running = [e["job_id"] for e in entries if e["status"] == "running"]
        return gr.update(choices=choices, value=running[0] if running else choices[0][1]), None

    @guarded(n_outputs, 0)
    def on_view(run_dir: str | None, job_id: str | None, axis_value: str, step_value: str | None = None,
                before_value: str | None = None, after_value: str | None = None) -> tuple[Any, ...]:
        if not run_dir or not job_id:
            return (*blank("Pick a run and a job."), None)
        files = job_files(Path(run_dir), job_id)
        return (*job_view(Path(run_dir), job_id, axis_value),
                *inspection(Path(run_dir), job_id, step_value, before_value, after_value), file_stamp(*files.values()))

    def on_job(run_dir: str | None, job_id: str | None, axis_value: str) -> Any:
        return on_view(run_dir, job_id, axis_value)  # another job: its latest step, initial → best

    @guarded(n_outputs, None)
    def on_tick(run_dir: str | None, job_id: str | None, axis_value: str, live: bool, last: Any,
                step_value: str | None, before_value: str | None, after_value: str | None) -> tuple[Any, ...]:
        if not live or not run_dir or not job_id or not RunStore(run_dir).job(job_id).exists():
            return tuple(gr.skip() for _ in range(n_outputs))
        current = file_stamp(*job_files(Path(run_dir), job_id).values())
        if last is not None and tuple(map(tuple, last)) == current:
            return tuple(gr.skip() for _ in range(n_outputs))
        if last is None:  # no view of this job yet (a run or job just picked): the picks the tick carries
            # may be the previous job's, and a step of the same name there was kept (the transcript
            # opened on step 1, not the job's latest step)
            step_value = before_value = after_value = None
        return (*job_view(Path(run_dir), job_id, axis_value),
                *inspection(Path(run_dir), job_id, step_value, before_value, after_value), current)

    @guarded(1, None)
    def on_step(run_dir: str | None, job_id: str | None, step_value: str | None) -> str:
        return conversation_html(RunStore(run_dir).job(job_id), step_value) if run_dir and job_id else ""

    @guarded(1, None)
    def on_diff(run_dir: str | None, job_id: str | None, before_value: str | None, after_value: str | None) -> str:
        return diff_html(RunStore(run_dir).job(job_id), before_value, after_value) if run_dir and job_id else ""

    def on_refresh(run_dir: str | None, job_id: str | None) -> tuple[Any, ...]:
        fresh = ctx.run_choices()
        picked = preselect(run_dir, fresh, 0)
        if picked != run_dir:  # the run changes: its change event picks the job
            return gr.update(choices=fresh, value=picked), gr.skip()
        return gr.update(choices=fresh, value=run_dir), gr.update(choices=job_choices(run_dir), value=job_id)

    return SimpleNamespace(run=on_run, view=on_view, job=on_job, tick=on_tick, step=on_step, diff=on_diff,
                           refresh=on_refresh)

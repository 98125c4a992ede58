"""Compare tab: paired comparison of two runs, or the reason they cannot be compared fairly."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

from trace_bench.ui.context import UIContext, guarded, preselect
from trace_bench.ui.readers import frame_of, markdown_text, masked

COLUMNS = ["task", "trainer", "params_label", "seeds", "dropped", "mean_a", "mean_b", "mean_a_minus_b", "ci_low", "ci_high",
           "p_value", "p_holm", "significant", "wins", "ties", "losses"]


def _number(value: Any) -> Any:
    """Floats to 4 significant digits for the table (NaN shown empty); other values as they are."""
    if isinstance(value, float):
        return None if math.isnan(value) else float(f"{value:.4g}")
    return value


def compare_table(run_a: str, run_b: str) -> tuple[str, list[dict[str, Any]], str]:
    """(message, rows, text table); the message explains a refusal instead of raising."""
    if not run_a or not run_b:
        return "Pick two runs.", [], ""
    if Path(run_a).resolve() == Path(run_b).resolve():
        return "Pick two different runs.", [], ""
    try:
        from trace_bench.analysis import CompareError, RunDirError, compare_runs, format_compare
    except ImportError as exc:
        return f"Compare needs the analysis extra (pandas, scipy): {exc}", [], ""
    try:
        result = compare_runs(run_a, run_b)
    except (CompareError, RunDirError) as exc:
        return f"**Not comparable:** {markdown_text(str(exc))}", [], ""
    rows = [{k: _number(v) for k, v in row.items()} for row in result.rows]
    axis = f"; the runs differ in **{result.differing_axes[0]}**" if result.differing_axes else \
        "; the runs have the same matrix"
    significant = sum(1 for r in rows if r.get("significant"))
    alpha = getattr(result, "alpha", 0.05)
    notes = " ".join(markdown_text(str(n)) for n in getattr(result, "notes", []) or [])
    message = (f"A = `{masked(result.run_a)}`, B = `{masked(result.run_b)}`{axis}. {len(rows)} arm(s) paired over "
               f"shared seeds, {significant} significant after Holm correction (alpha {alpha:g}). "
               f"mean_a_minus_b > 0 means A scored higher. {notes}").strip()
    return message, rows, masked(format_compare(result))


def build(ctx: UIContext) -> dict[str, Any]:
    import gradio as gr
    import pandas as pd

    choices = ctx.run_choices()
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

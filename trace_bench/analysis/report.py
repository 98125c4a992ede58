"""``report.html``: one self-contained page (inline CSS and SVG, no scripts, no CDN)."""

from __future__ import annotations

import html
import math
from pathlib import Path
from typing import Any

import pandas as pd

from trace_bench.analysis.curves import AXES, arm_curves, generalization_gap
from trace_bench.analysis.load import RunSet, load_runs
from trace_bench.analysis.stats import leaderboard, per_arm, win_matrix
from trace_bench.analysis.svg import line_chart
from trace_bench.store.atomic import write_text

CSS = """body{font-family:system-ui,sans-serif;margin:24px;color:#222}table{border-collapse:collapse;margin:8px 0 20px}
th,td{border:1px solid #ccc;padding:4px 8px;font-size:13px;text-align:left}th{background:#f3f3f3}
section{margin-bottom:28px}.charts{display:flex;flex-wrap:wrap;gap:12px}.muted{color:#777}"""


def _fmt(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float):
        if math.isnan(value):
            return ""
        return f"{value:.4g}"
    return str(value)


def _table(frame: pd.DataFrame, columns: list[str]) -> str:
    if frame.empty:
        return '<p class="muted">none</p>'
    head = "".join(f"<th>{html.escape(c)}</th>" for c in columns)
    body = "".join("<tr>" + "".join(f"<td>{html.escape(_fmt(row.get(c)))}</td>" for c in columns) + "</tr>"
                   for row in frame.to_dict("records"))
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _mean_ci(row: dict[str, Any]) -> str:
    if math.isnan(row["mean"]):
        return ""
    if math.isnan(row["ci_low"]):
        return f"{row['mean']:.4g}"
    return f"{row['mean']:.4g} ± {(row['ci_high'] - row['ci_low']) / 2:.3g}"


def _curves(runs: RunSet) -> str:
    charts = []
    for task in sorted(runs.curves["task"].dropna().unique()) if not runs.curves.empty else []:
        task_curves = runs.curves[runs.curves["task"] == task]
        for axis in ("llm_calls", "tokens", "usd", "wall_s"):
            aggregated = arm_curves(task_curves, axis)
            series = [(f"{t} ({p})", g["x"].tolist(), g["mean"].tolist())
                      for (t, p), g in aggregated.groupby(["trainer", "params_label"], sort=True)]
            charts.append(line_chart(series, title=f"{task}: best score vs {AXES[axis]}", x_label=AXES[axis],
                                     y_label="best score (mean over seeds)"))
    return f'<div class="charts">{"".join(charts)}</div>' if charts else '<p class="muted">no curves</p>'


def build_report(runs: RunSet) -> str:
    board = leaderboard(runs.jobs)
    arms = per_arm(runs.jobs)
    if not arms.empty:
        arms["mean ± 95% CI"] = [_mean_ci(r) for r in arms.to_dict("records")]
    wins = win_matrix(runs.jobs)
    failures = runs.jobs[~runs.jobs["scored"]]
    gap = generalization_gap(runs.jobs)
    title = ", ".join(html.escape(d.name) for d in runs.run_dirs)
    sections = [
        ("leaderboard", "Leaderboard", "Per task, arms ranked by mean best score over seeds.",
         _table(board, ["task", "rank", "trainer", "params_label", "n", "failed", "mean", "std", "ci_low", "ci_high"])),
        ("per-task", "Per-task results", "Mean ± half-width of the 95 % Student-t interval over seeds.",
         _table(arms, ["task", "trainer", "params_label", "n", "mean ± 95% CI", "mean_initial", "mean_test"])
         + _table(gap, ["task", "trainer", "params_label", "gap"])),
        ("curves", "Anytime curves", "Best-so-far score (mean over seeds) against LLM calls, tokens, USD and time.",
         _curves(runs)),
        ("win-matrix", "Win / tie / loss", "Paired over seeds per task (Wilcoxon signed-rank, Holm-corrected "
         "across tasks, alpha 0.05).", _table(wins, ["arm", "versus", "tasks", "wins", "ties", "losses"])),
        ("cost", "Cost", "Average spend per job.",
         _table(arms, ["task", "trainer", "params_label", "llm_calls", "tokens", "cost_usd", "time_s"])),
        ("failures", "Failures", "Jobs that did not end ok or budget_exhausted.",
         _table(failures, ["task", "trainer", "params_label", "seed", "status", "error"])),
    ]
    body = "".join(f'<section id="{sid}"><h2>{name}</h2><p class="muted">{note}</p>{content}</section>'
                   for sid, name, note, content in sections)
    counts = runs.jobs["status"].value_counts().to_dict()
    summary = ", ".join(f"{html.escape(str(k))}: {v}" for k, v in sorted(counts.items()))
    return (f"<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\"><title>trace-bench report: {title}"
            f"</title><style>{CSS}</style></head><body><h1>trace-bench report</h1><p>Runs: {title}. "
            f"Jobs: {len(runs.jobs)} ({summary}).</p>{body}</body></html>")


def write_report(run_dirs: list[str | Path], out_path: str | Path | None = None) -> Path:
    runs = load_runs(run_dirs)
    if out_path is None:
        out_path = Path(run_dirs[0]) / "report.html" if len(run_dirs) == 1 else Path("report.html")
    out = Path(out_path)
    write_text(out, build_report(runs))
    return out

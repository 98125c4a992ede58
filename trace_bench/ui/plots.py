"""Frames for the curve plots: best-so-far score against an axis, per job or per trainer; and the
cost–quality frontier of a run's tasks (:func:`frontier_html`).

Curves are read from each job's ``artifacts/curve.csv`` through the store (with the manifest naming the
job's task and trainer), not through ``results.csv``, so a run that is still going has curves for
its running and finished jobs alike.  Aggregation over seeds reuses
``trace_bench.analysis.curves.arm_curves`` so the UI and report.html draw the same means.
"""

from __future__ import annotations

import html
from pathlib import Path
from typing import Any

from trace_bench.store.models import COUNTED, SPEND_AXES, StoreError, arm_label
from trace_bench.store.ranking import variant_of
from trace_bench.store.run_store import RunStore
from trace_bench.ui.discovery import job_entries
from trace_bench.ui.readers import with_analysis

AXES = {**SPEND_AXES, "step": "step"}
POINT_COLUMNS = ("step", "wall_s", "n_evals", *COUNTED, "score", "best_score")
PLOT_COLUMNS = ["x", "best_score", "series"]


def job_points(run_dir: Path, job_id: str) -> list[dict[str, Any]]:
    """A job's curve points as numbers, with each row's ``kind`` (the store drops torn rows); none
    when unreadable."""
    try:
        rows = RunStore(run_dir).job(job_id).read_curve()
    except StoreError:
        return []
    return [{**{c: _number(getattr(row, c)) for c in POINT_COLUMNS}, "kind": row.kind or ""} for row in rows]


def _number(value: float | int | None) -> float | None:
    return None if value is None else float(value)


def job_curve_frame(run_dir: Path, job_id: str, axis: str = "step") -> Any:
    """One job: best-so-far and current score against ``axis`` (long format, for a colour legend)."""
    import pandas as pd

    rows = []
    for point in job_points(run_dir, job_id):
        x = point.get(axis)
        if x is None:
            continue
        for name in ("best_score", "score"):
            if point.get(name) is not None:
                rows.append({"x": x, "best_score": point[name], "series": name.replace("_", " ")})
    return pd.DataFrame(rows, columns=PLOT_COLUMNS)


def curves_long(run_dir: Path, job_ids: list[str] | None = None) -> Any:
    """All (or the given) jobs' curve points with task/trainer/params_label/seed attached."""
    import pandas as pd

    wanted = set(job_ids) if job_ids is not None else None
    rows: list[dict[str, Any]] = []
    for entry in job_entries(Path(run_dir)):
        if wanted is not None and entry["job_id"] not in wanted:
            continue
        task, params = variant_of(str(entry.get("task", "?")), entry.get("task_label"), entry.get("params_label"))
        for point in job_points(run_dir, entry["job_id"]):
            rows.append({"job_id": entry["job_id"], "task": task, "trainer": str(entry.get("trainer", "?")),
                         "params_label": params, "seed": entry.get("seed"), **point})
    columns = ["job_id", "task", "trainer", "params_label", "seed", *POINT_COLUMNS, "kind"]
    return pd.DataFrame(rows, columns=columns)


def run_curve_frame(run_dir: Path, axis: str = "llm_calls", group: str = "trainer",
                    job_ids: list[str] | None = None) -> Any:
    """Best score vs ``axis``: one series per job, or the mean over seeds per (task, trainer, params)
    with its 95 % interval (``low``, ``high``) as in report.html; ``task`` says whose (tasks score
    on scales of their own, so each gets its own chart)."""
    import pandas as pd

    curves = curves_long(run_dir, job_ids)
    if curves.empty or axis not in curves:
        return pd.DataFrame(columns=[*PLOT_COLUMNS, "task"])
    curves = curves[curves[axis].notna() & curves["best_score"].notna()]
    if group == "job":
        frame = curves.sort_values(["job_id", "step"])
        frame = frame.assign(series=[f"{r.trainer} s{r.seed} [{r.job_id[:6]}]" for r in frame.itertuples()])
        best = frame.groupby("job_id")["best_score"].cummax()
        return pd.DataFrame({"x": frame[axis].to_numpy(), "best_score": best.to_numpy(),
                             "series": frame["series"].to_numpy(), "task": frame["task"].to_numpy()})
    from trace_bench.analysis.curves import arm_curves

    means = arm_curves(curves, axis)
    if means.empty:
        return pd.DataFrame(columns=[*PLOT_COLUMNS, "task"])
    series = [arm_label(tr, p) for tr, p in zip(means["trainer"], means["params_label"], strict=True)]
    return pd.DataFrame({"x": means["x"], "best_score": means["mean"], "series": series, "low": means["low"],
                         "high": means["high"], "task": means["task"]})


def frontier_html(run_dir: Path) -> str:
    """The cost–quality frontier of each task of a run, as report.html draws it (one chart per task,
    arms coloured as in the curves), with the frontier's arms listed above each chart."""
    return with_analysis(
        run_dir, _frontier_charts,
        needs_extra=lambda why: ('<p class="tb-frontier-note">the frontier needs the analysis extra: '
                                 f'{html.escape(why)}</p>'),
        unreadable=lambda why: f'<p class="tb-frontier-note">no frontier: {html.escape(why)}</p>')


def _frontier_charts(jobs: Any) -> str:
    from trace_bench.analysis.frontier import frontier_lines, frontier_table
    from trace_bench.analysis.frontier_chart import frontier_chart

    frame = frontier_table(jobs)
    if frame.empty:
        return '<p class="tb-frontier-note">no frontier: no jobs yet</p>'
    arms = sorted({(str(t), str(p)) for t, p in zip(frame["trainer"], frame["params_label"], strict=True)})
    styles = {arm: index for index, arm in enumerate(arms)}
    parts = []
    for (task, group), line in zip(frame.groupby("task", sort=True), frontier_lines(frame), strict=True):
        parts.append(f'<div style="flex:1 1 520px;max-width:640px"><p class="tb-frontier-line">{html.escape(line)}</p>'
                     + frontier_chart(group, title=f"{task}: mean score vs mean cost per job", styles=styles,
                                      css_class="tb-chart tb-frontier") + "</div>")
    return f'<div style="display:flex;flex-wrap:wrap;gap:16px">{"".join(parts)}</div>'



def reach_html(run_dir: Path) -> str:
    """Cost to reach each fraction of the best known value, as report.html's ``reach`` section shows it;
    empty for a run with no task that has a best known value (its curves are then not read)."""
    try:
        from trace_bench.analysis.load import RunDirError, load_jobs, load_runs
        from trace_bench.analysis.reach import REACH_NOTE, reach_table
        from trace_bench.analysis.reach import reach_html as reach_tables
    except ImportError as exc:
        return f'<p class="tb-frontier-note">cost to reach needs the analysis extra: {html.escape(str(exc))}</p>'
    try:
        jobs = load_jobs(run_dir)
        if "best_known_score" not in jobs or jobs["best_known_score"].isna().all():
            return ""
        runs = load_runs([run_dir])
    except RunDirError as exc:
        return f'<p class="tb-frontier-note">no cost to reach: {html.escape(str(exc))}</p>'
    return (f'<h4 id="tb-reach">Cost to reach</h4><p class="tb-frontier-note">{html.escape(REACH_NOTE)}</p>'
            + reach_tables(reach_table(runs.jobs, runs.curves)))


def equal_spend_section(run_dir: Path) -> str:
    """Each arm's curve at equal spend, at the config's checkpoints and as the normalized AUC, as
    report.html shows it under the curves; empty for a run without curves."""
    try:
        from trace_bench.analysis.equal_spend import equal_spend_html
        from trace_bench.analysis.load import RunDirError, load_runs
    except ImportError as exc:
        return f'<p class="tb-frontier-note">scores at equal spend need the analysis extra: {html.escape(str(exc))}</p>'
    try:
        return equal_spend_html(load_runs([run_dir]))
    except RunDirError as exc:
        return f'<p class="tb-frontier-note">no scores at equal spend: {html.escape(str(exc))}</p>'

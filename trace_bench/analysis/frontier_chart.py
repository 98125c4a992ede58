"""The frontier chart: one task's arms as points (mean cost, mean score) with 95 % interval bars on
both axes, frontier arms filled, incomplete arms (failed or missing seeds; never on the frontier)
hollow and grey with their ``k/N seeds`` in the legend, and the frontier drawn as the staircase "best
score for at most this cost".  Inline SVG through matplotlib (imported on first use), in the same styles as the curves
(:mod:`.chart`), so an arm has one colour and marker across a report; report.html and the UI's Browse
tab both draw it with :func:`frontier_chart`.
"""

from __future__ import annotations

import io
import math
from html import escape

import pandas as pd

from trace_bench.analysis.chart import (
    BOTTOM_PX,
    LEFT_PX,
    PT,
    RIGHT_PX,
    TOP_PX,
    _label,
    _legend_height,
    _plain,
    _svg_element,
    style_of,
)
from trace_bench.store.frontier import COST_AXES
from trace_bench.store.models import arm_label
from trace_bench.store.ranking import seeds_cell

FRONTIER_COLOUR = "#333333"
#: an incomplete arm (failed or missing seeds) is drawn in grey, hollow: it is never on the frontier
INCOMPLETE_COLOUR = "#9a9a9a"


def _finite(value: object) -> float | None:
    try:
        number = float(value)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def frontier_chart(rows: pd.DataFrame, *, title: str, styles: dict[tuple[str, str], int] | None = None,
                   panel_px: tuple[int, int] = (520, 300), css_class: str = "tb-chart") -> str:
    """An HTML ``<div>`` with the SVG of one task's rows of :func:`.frontier.frontier_table`; arms
    without a mean cost and score are left out (and the chart says so when none is left)."""
    points = [r for _, r in rows.iterrows() if _finite(r["cost_mean"]) is not None
              and _finite(r["score_mean"]) is not None]
    if not points:
        return (f'<div class="{escape(css_class)}" data-series="0"><p class="note" style="color:#777;padding:12px">'
                f"{escape(title)}: no scored arm</p></div>")
    try:
        import matplotlib
        from matplotlib.figure import Figure
        from matplotlib.lines import Line2D
    except ImportError:
        return (f'<div class="{escape(css_class)}" data-series="0"><p class="note">charts need matplotlib: '
                "pip install 'trace-bench[analysis]'</p></div>")
    axis = str(points[0]["cost_axis"])
    below = far_below(points)
    labels = [_label(arm_label(str(r["trainer"]), str(r["params_label"])) + _suffix(r)
                     + (f" (below the chart: {float(r['score_mean']):.4g})" if id(r) in below else ""))
              for r in points]
    legend_px = _legend_height([*labels, "frontier"], 1)
    width_px, height_px = panel_px
    total_h = height_px + legend_px
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": "frontier", "font.size": 8,
                                "legend.fontsize": 7.5, "font.family": "sans-serif"}):
        figure = Figure(figsize=(width_px * PT / 72, total_h * PT / 72), dpi=72)
        axes = figure.add_axes(((LEFT_PX) / width_px, (legend_px + BOTTOM_PX) / total_h,
                                (width_px - LEFT_PX - RIGHT_PX) / width_px, (height_px - TOP_PX - BOTTOM_PX) / total_h))
        handles: list[Line2D] = []
        for row in points:
            style = (styles or {}).get((str(row["trainer"]), str(row["params_label"])), len(handles))
            colour, _, marker = style_of(style)
            x, y = float(row["cost_mean"]), float(row["score_mean"])
            whiskers_x, whiskers_y = ([], []) if id(row) in below else _whiskers(x, y, row)
            if not _complete(row):  # never on the frontier: drawn hollow and grey, its bars dotted
                colour = INCOMPLETE_COLOUR
            if whiskers_x:  # one polyline per arm (NaN-separated): errorbar() costs ~10x more per point
                axes.plot(whiskers_x, whiskers_y, color=colour, linewidth=0.9, solid_capstyle="butt",
                          linestyle="-" if _complete(row) else ":")
            face = colour if row["on_frontier"] else "white"
            if id(row) in below:  # drawn on the bottom edge with its score written beside it
                axes.annotate(f"\u2193 {y:.4g}", (x, 0.0), xycoords=("data", "axes fraction"), xytext=(6, 3),
                              textcoords="offset points", fontsize=7.5, color=colour, gid="tb-below")
                axes.plot([x], [0.0], linestyle="none", marker="v", color=colour, markerfacecolor=face,
                          markersize=7, transform=axes.get_xaxis_transform(), clip_on=False)
            else:
                axes.plot([x], [y], linestyle="none", marker=marker, color=colour, markerfacecolor=face,
                          markersize=6)
            handles.append(Line2D([], [], color=colour, marker="v" if id(row) in below else marker,
                                  markerfacecolor=face, linestyle="none",
                                  markersize=6))
        front = sorted((float(r["cost_mean"]), float(r["score_mean"])) for r in points if r["on_frontier"])
        left, right = _limits(points, "cost")
        bottom, top = _limits([r for r in points if id(r) not in below], "score")
        if front:  # none when every scored arm is incomplete
            axes.step([x for x, _ in front] + [right], [y for _, y in front] + [front[-1][1]], where="post",
                      color=FRONTIER_COLOUR, linewidth=1.2, linestyle=(0, (4, 2)))
        handles.append(Line2D([], [], color=FRONTIER_COLOUR, linewidth=1.2, linestyle=(0, (4, 2))))
        axes.set_xlim(left, right)
        axes.set_ylim(bottom, top)
        axes.set_xlabel(_plain(f"mean trainer-phase {COST_AXES.get(axis, axis)} per job"))
        axes.set_ylabel(_plain(f"mean score ({points[0]['metric']})"))
        axes.grid(True, color="#e4e7ee", linewidth=0.6)
        axes.text(0.5, 1.0 + 8 / (height_px - TOP_PX - BOTTOM_PX), _plain(title), transform=axes.transAxes,
                  ha="center", va="bottom", fontsize=9, fontweight="bold")
        figure.legend(handles, [*labels, "frontier: best mean score for at most this cost"], loc="upper left",
                      bbox_to_anchor=(8 / width_px, 1 - height_px / total_h), frameon=False, borderaxespad=0.0,
                      labelspacing=0.4, handlelength=3.2)
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    incomplete = sum(1 for r in points if not _complete(r))
    return (f'<div class="{escape(css_class)}" data-series="{len(points)}" data-frontier="{len(front)}" '
            f'data-incomplete="{incomplete}" data-below="{len(below)}">{_svg_element(buffer.getvalue())}</div>')


#: an arm whose whole interval lies further below the others than this many times their span is
#: drawn on the chart's bottom edge instead of stretching the score axis
FAR_BELOW = 4.0


def far_below(points: list[pd.Series]) -> set[int]:
    """The ``id`` of each arm far below the rest (a NoOp baseline at -3 beside arms near 0 would
    otherwise squash them into a line): going down the means, the first arm whose interval top lies
    more than ``FAR_BELOW`` times the span of the arms above (intervals included) under them, and
    every arm below it.  The best arm is never far below."""
    ordered = sorted(points, key=lambda r: -float(r["score_mean"]))
    values = _score_values(ordered[0])
    for index, row in enumerate(ordered[1:], start=1):
        low, high = min(values), max(values)
        span = (high - low) if high > low else max(abs(high) * 0.1, 0.05)
        if max(_score_values(row)) < low - FAR_BELOW * span:
            return {id(r) for r in ordered[index:]}
        values += _score_values(row)
    return set()


def _score_values(row: pd.Series) -> list[float]:
    return [v for v in (_finite(row[f"score_{k}"]) for k in ("mean", "low", "high")) if v is not None]


def _complete(row: pd.Series) -> bool:
    """Whether an arm scored every seed it planned (rows without the column count as complete)."""
    return bool(row.get("complete", True))


def _suffix(row: pd.Series) -> str:
    """What a legend entry adds to the arm: ``(frontier)``, or ``(incomplete k/N seeds)``."""
    if not _complete(row):
        return f" (incomplete {seeds_cell(int(row['n']), int(row['planned']))}, never on the frontier)"
    return " (frontier)" if row["on_frontier"] else ""


def _limits(points: list[pd.Series], name: str) -> tuple[float, float]:
    """An axis range holding every mean and every interval bound, with a 5 % margin each side (the
    intervals are what the chart is for, so none is cut)."""
    values = [v for r in points for v in (_finite(r[f"{name}_mean"]), _finite(r[f"{name}_low"]),
                                           _finite(r[f"{name}_high"])) if v is not None]
    low, high = min(values), max(values)
    pad = (high - low) * 0.05 if high > low else max(abs(high) * 0.1, 0.05)
    return low - pad, high + pad


def _whiskers(x: float, y: float, row: pd.Series) -> tuple[list[float], list[float]]:
    """The 95 % interval bars of one point, horizontal (cost) and vertical (score), as one
    NaN-separated polyline; an undefined interval (one seed) has no bar."""
    xs: list[float] = []
    ys: list[float] = []
    cost_low, cost_high = _finite(row["cost_low"]), _finite(row["cost_high"])
    if cost_low is not None and cost_high is not None:
        xs += [cost_low, cost_high, math.nan]
        ys += [y, y, math.nan]
    score_low, score_high = _finite(row["score_low"]), _finite(row["score_high"])
    if score_low is not None and score_high is not None:
        xs += [x, x]
        ys += [score_low, score_high]
    return xs, ys

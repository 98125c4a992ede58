"""The one chart of trace-bench: best-so-far step curves with light 95 % bands, as inline SVG.

report.html and the UI both draw their curves with :func:`step_chart`, so the two agree by
construction.  matplotlib lays out axes, ticks and the legend; it is imported on first use only
(``analysis``/``ui`` extras), never on the path of ``trace-bench run``.  The output is a plain
``<svg>`` (text kept as text, no scripts, no external files) wrapped in a ``<div>``.

Choices a reader relies on:

* the y-axis is scaled to the means, not the bands: with two seeds a Student-t band is ~13 times
  the spread and would flatten every curve, so bands are drawn light and clipped at the plot edge;
* spend axes start at 0 (a 0 tick, nothing negative), and y stays at or above 0 when every mean does;
* each series has its own colour, dash pattern and marker, so overlapping curves stay apart;
* a curve stops where its data stops, with its marker drawn large and dark-edged there (an end
  marker), so an arm that stopped early is not read as holding its score to the end;
* the legend sits below the plot, long labels wrap instead of being cut, and at most
  ``max_legend`` entries are listed (the rest are counted).
"""

from __future__ import annotations

import hashlib
import io
import math
import re
import textwrap
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

COLOURS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f",
           "#bcbd22")
DASHES: tuple[Any, ...] = ("-", (0, (5, 2)), (0, (1, 1.5)), (0, (6, 2, 1, 2)))
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
MARKERS_PER_LINE = 4
LABEL_WIDTH = 64
BAND_ALPHA = 0.1
PT = 0.75  # points per CSS pixel
LEFT_PX, RIGHT_PX, TOP_PX, BOTTOM_PX = 56, 14, 26, 40  # room for the title, tick labels and axis labels
LEGEND_LINE_PX, LEGEND_GAP_PX = 12.5, 5
_FIGURES = threading.local()


@dataclass(frozen=True)
class Series:
    """One curve: ``mean`` against ``x``, optionally with a band [``low``, ``high``].

    ``style`` picks colour, dash and marker (keep it fixed per arm so an arm looks the same in every
    chart); ``dashed`` forces a dashed line (a secondary curve such as the current score)."""

    label: str
    x: Sequence[float]
    mean: Sequence[float]
    low: Sequence[float] | None = None
    high: Sequence[float] | None = None
    style: int = 0
    dashed: bool = False


def style_of(index: int) -> tuple[str, Any, str]:
    """(colour, dash, marker) of style ``index``: all three differ between neighbouring styles."""
    return COLOURS[index % len(COLOURS)], DASHES[index % len(DASHES)], MARKERS[index % len(MARKERS)]


def _finite_points(series: Series) -> tuple[list[float], list[float], list[float], list[float]]:
    """The series' points with a finite x and mean; a missing band edge falls back to the mean."""
    xs, means, lows, highs = [], [], [], []
    for i, (x, mean) in enumerate(zip(series.x, series.mean, strict=True)):
        x, mean = float(x), float(mean)
        if not (math.isfinite(x) and math.isfinite(mean)):
            continue
        low = float(series.low[i]) if series.low is not None else mean
        high = float(series.high[i]) if series.high is not None else mean
        xs.append(x)
        means.append(mean)
        lows.append(low if math.isfinite(low) else mean)
        highs.append(high if math.isfinite(high) else mean)
    return xs, means, lows, highs


def y_limits(means: Sequence[float]) -> tuple[float, float]:
    """The y range: the means with a margin, never below 0 when no mean is (bands do not count)."""
    low, high = min(means), max(means)
    span = high - low
    pad = span * 0.08 if span > 0 else max(abs(high) * 0.1, 0.05)
    bottom = low - pad
    if low >= 0 > bottom:
        bottom = 0.0
    return bottom, high + pad


def x_limits(xs: Sequence[float]) -> tuple[float, float]:
    """The x range: from 0 (spend and steps start there) to just past the largest x (a marker there
    stays whole)."""
    left, right = min(0.0, min(xs)), max(xs)
    return (left, right + (right - left) * 0.02) if right > left else (left, left + 1.0)


def _plain(text: str) -> str:
    """User text shown literally: matplotlib would read ``$...$`` as maths."""
    return text.replace("$", r"\$")


def _label(text: str) -> str:
    return "\n".join(textwrap.wrap(_plain(text), LABEL_WIDTH, break_on_hyphens=False)) or " "


def _svg_element(data: str) -> str:
    """The ``<svg>`` element of matplotlib's document, sized to shrink with its container."""
    svg = data[data.index("<svg"):]
    return re.sub(r"<svg ", '<svg style="max-width:100%;height:auto" role="img" ', svg, count=1)


@dataclass(frozen=True)
class Panel:
    """One plot of a chart: its title, x-axis label and curves."""

    title: str
    x_label: str
    series: Sequence[Series]


def step_chart(series: Sequence[Series], *, title: str, x_label: str, y_label: str, **options: Any) -> str:
    """A one-panel :func:`curve_chart`."""
    return curve_chart([Panel(title, x_label, series)], y_label=y_label, **options)


def _legend_entries(panels: Sequence[tuple[Panel, list[Any]]]) -> list[tuple[str, int, bool]]:
    """(label, style, dashed) of every drawn series, each once, in order of first appearance."""
    seen: dict[tuple[str, int, bool], None] = {}
    for _, drawn in panels:
        for item, *_ in drawn:
            seen.setdefault((item.label, item.style, item.dashed), None)
    return list(seen)


def _legend_height(labels: Sequence[str], columns: int) -> float:
    """Pixels the legend needs: matplotlib fills it column by column."""
    rows = math.ceil(len(labels) / columns) if labels else 0
    heights = [LEGEND_LINE_PX * (label.count("\n") + 1) + LEGEND_GAP_PX for label in labels]
    return max((sum(heights[c * rows:(c + 1) * rows]) for c in range(columns)), default=0) + 6


def curve_chart(panels: Sequence[Panel], *, y_label: str, columns: int = 1, panel_px: tuple[int, int] = (440, 240),
                max_legend: int = 24, css_class: str = "tb-chart", empty: str = "no data on this axis") -> str:
    """An HTML ``<div>`` holding one SVG: the panels in a grid of ``columns``, one shared legend below.

    A series keeps its style in every panel; a panel without finite points says ``empty``."""
    from html import escape

    prepared = [(panel, [d for d in ((s, *_finite_points(s)) for s in panel.series) if d[1]]) for panel in panels]
    entries = _legend_entries(prepared)
    if not entries:
        title = "; ".join(panel.title for panel in panels)
        return (f'<div class="{escape(css_class)}" data-series="0"><p class="note" style="color:#777;'
                f'padding:12px">{escape(title)}: {escape(empty)}</p></div>')
    try:
        import matplotlib
        from cycler import cycler
        from matplotlib.lines import Line2D
    except ImportError:
        return (f'<div class="{escape(css_class)}" data-series="0"><p class="note">charts need matplotlib: '
                "pip install 'trace-bench[analysis]'</p></div>")

    width_px, height_px = panel_px
    grid_rows = math.ceil(len(panels) / columns)
    legend_columns = 2 if columns > 1 and len(entries) > 4 else 1
    labels = [_label(label) for label, _, _ in entries[:max_legend]]
    if len(entries) > max_legend:
        labels.append(f"… and {len(entries) - max_legend} more")
    legend_px = _legend_height(labels, legend_columns)
    total_w, total_h = width_px * columns, height_px * grid_rows + legend_px
    salt = hashlib.sha1("\0".join(p.title for p in panels).encode()).hexdigest()[:12]
    with matplotlib.rc_context({"svg.fonttype": "none", "svg.hashsalt": salt, "font.size": 8, "legend.fontsize": 7.5,
                                "font.family": "sans-serif",
                                # one entry: every style is set explicitly
                                "axes.prop_cycle": cycler(color=["#000000"])}):
        figure, all_axes = _blank_figure(len(prepared), (total_w * PT / 72, total_h * PT / 72))
        for index, ((panel, drawn), axes) in enumerate(zip(prepared, all_axes, strict=True)):
            row, column = divmod(index, columns)
            bottom = legend_px + (grid_rows - 1 - row) * height_px + BOTTOM_PX
            axes.set_position(((column * width_px + LEFT_PX) / total_w, bottom / total_h,
                               (width_px - LEFT_PX - RIGHT_PX) / total_w, (height_px - TOP_PX - BOTTOM_PX) / total_h))
            _draw_panel(axes, panel, drawn, y_label, height_px, empty)
        handles = []
        for _, style, dashed in entries[:max_legend]:
            colour, dash, marker = style_of(style)
            handles.append(Line2D([], [], color=colour, linestyle=(0, (4, 2)) if dashed else dash, linewidth=1.5,
                                  marker=marker, markersize=3.5))
        if len(entries) > max_legend:
            handles.append(Line2D([], [], linestyle="none"))
        figure.legend(handles, labels, loc="upper left", bbox_to_anchor=(8 / total_w, 1 - height_px * grid_rows
                                                                          / total_h),
                      ncols=legend_columns, frameon=False, borderaxespad=0.0, handlelength=3.2, labelspacing=0.4,
                      columnspacing=1.5)
        buffer = io.StringIO()
        figure.savefig(buffer, format="svg", metadata={"Date": None, "Creator": None})
    return f'<div class="{escape(css_class)}" data-series="{len(entries)}">{_svg_element(buffer.getvalue())}</div>'


def _blank_figure(count: int, size_in: tuple[float, float]) -> tuple[Any, list[Any]]:
    """A figure with ``count`` empty axes, kept per thread and emptied for each chart: creating axes
    and their ticks is about half the cost of a chart, and a report draws one chart per task."""
    from matplotlib.figure import Figure

    figures = _FIGURES.__dict__.setdefault("by_count", {})
    if count not in figures:
        figure = Figure(figsize=size_in, dpi=72)
        figures[count] = (figure, [figure.add_axes((0.0, 0.0, 1.0, 1.0)) for _ in range(count)])
    figure, all_axes = figures[count]
    figure.set_size_inches(*size_in)
    for legend in list(figure.legends):
        legend.remove()
    for axes in all_axes:
        for artist in [*axes.lines, *axes.patches, *axes.texts]:
            artist.remove()
    return figure, all_axes


def _band_outline(xs: Sequence[float], lows: Sequence[float], highs: Sequence[float]) -> list[tuple[float, float]]:
    """The band of a post-step curve as one polygon: along ``highs`` left to right, back along ``lows``
    (a plain patch is several times cheaper to draw than ``fill_between``)."""

    def steps(ys: Sequence[float]) -> list[tuple[float, float]]:
        points = [(xs[0], ys[0])]
        for x, previous, y in zip(xs[1:], ys, ys[1:], strict=False):
            points += [(x, previous), (x, y)]
        return points

    return [*steps(highs), *reversed(steps(lows))]


def _draw_panel(axes: Any, panel: Panel, drawn: list[Any], y_label: str, height_px: int, empty: str) -> None:
    from matplotlib.patches import Polygon
    from matplotlib.ticker import MaxNLocator

    axes.text(0.5, 1.0 + 8 / (height_px - TOP_PX - BOTTOM_PX), _plain(panel.title), transform=axes.transAxes,
              ha="center", va="bottom", fontsize=9, fontweight="bold")
    axes.set_xlabel(_plain(panel.x_label))
    axes.set_ylabel(_plain(y_label))
    axes.xaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]))
    axes.yaxis.set_major_locator(MaxNLocator(nbins=5, steps=[1, 2, 2.5, 5, 10]))
    axes.grid(True, color="#e4e7ee", linewidth=0.6)
    if not drawn:
        axes.set_xticks([])
        axes.set_yticks([])
        axes.text(0.5, 0.5, _plain(empty), transform=axes.transAxes, ha="center", va="center", color="#777")
        return
    for item, xs, means, lows, highs in drawn:
        colour, dash, marker = style_of(item.style)
        every = max(1, math.ceil(len(xs) / MARKERS_PER_LINE))
        if item.low is not None or item.high is not None:
            band = Polygon(_band_outline(xs, lows, highs), closed=True, facecolor=colour, alpha=BAND_ALPHA,
                           linewidth=0)
            axes.add_artist(band)  # not add_patch: limits are set below, and data limits of a polygon are slow
        axes.step(xs, means, where="post", color=colour, linestyle=(0, (4, 2)) if item.dashed else dash,
                  linewidth=1.5, marker=marker, markersize=3.5, markevery=(item.style % every, every))
        axes.plot(xs[-1:], means[-1:], linestyle="none", marker=marker, markersize=7, color=colour,
                  markeredgecolor="#222222", markeredgewidth=0.9, gid=f"tb-end-{len(axes.lines)}")
    axes.set_xlim(*x_limits([x for d in drawn for x in d[1]]))
    axes.set_ylim(*y_limits([m for d in drawn for m in d[2]]))

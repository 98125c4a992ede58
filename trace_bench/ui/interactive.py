"""The UI's interactive curve charts: plotly figures for ``gr.Plot`` (hover, drag to zoom, double-click
to reset, click a legend entry to hide its series, double-click to show it alone).

They draw the same long frames as report.html's charts (``x``, ``best_score``, ``series``; ``low``/
``high`` for a mean's 95 % band; ``task`` for one panel per task, since tasks score on scales of their
own) in the same colours, and like them each curve stops where its data stops, at an end marker, so
an arm that stopped early is not read as holding its score to the end.  A figure replaces the whole
chart on every update (Gradio's native line plot kept stale lines and legends when its data changed).
plotly is part of the ``ui`` extra and imported on first use.
"""

from __future__ import annotations

from typing import Any

#: pixels per task panel, and the least a figure is given (room for the legend)
PANEL_PX, MIN_PX = 300, 360
#: a trace's ``meta`` says what it is (tests and the browser read it): a curve, its band, its end
CURVE, BAND, END = "curve", "band", "end"


def _colour(index: int) -> str:
    from trace_bench.analysis.chart import COLOURS

    return COLOURS[index % len(COLOURS)]


def _rgba(colour: str, alpha: float) -> str:
    red, green, blue = (int(colour[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgba({red},{green},{blue},{alpha})"


def message_figure(title: str, text: str) -> Any:
    """A figure that says why there is nothing to draw (in the chart's place, title kept)."""
    import plotly.graph_objects as go

    figure = go.Figure()
    figure.add_annotation(text=text, showarrow=False, xref="paper", yref="paper", x=0.5, y=0.5,
                          font={"size": 13, "color": "#555"})
    figure.update_layout(title={"text": title, "font": {"size": 14}}, height=240, xaxis={"visible": False},
                         yaxis={"visible": False}, plot_bgcolor="white", margin={"t": 48, "b": 24, "l": 24, "r": 24},
                         meta={"series": 0})
    return figure


def curve_figure(frame: Any, *, title: str, x_label: str, y_label: str,
                 dashed: frozenset[str] = frozenset()) -> Any:
    """One panel per task (or one panel), one legend entry per ``series`` (sorted by name, so a series
    keeps its colour while the frame grows); series named in ``dashed`` are drawn dashed."""
    if frame is None or len(frame) == 0:
        return message_figure(title, "no curve points yet")
    from plotly.subplots import make_subplots

    frame = frame[frame["x"].notna() & frame["best_score"].notna()]
    tasks = sorted(frame["task"].unique()) if "task" in frame and frame["task"].nunique() > 1 else [None]
    names = sorted({str(s) for s in frame["series"]})
    styles = {name: index for index, name in enumerate(names)}
    figure = make_subplots(rows=len(tasks), cols=1, vertical_spacing=0.4 / len(tasks) if len(tasks) > 1 else 0.1,
                           subplot_titles=[f"{task}: {title}" if task else title for task in tasks])
    shown: set[str] = set()
    for row, task in enumerate(tasks, start=1):
        part = frame if task is None else frame[frame["task"] == task]
        for name, group in part.groupby(part["series"].astype(str), sort=True):
            group = group.sort_values("x", kind="stable")
            _add_series(figure, group, str(name), styles[str(name)], row, str(name) not in shown,
                        str(name) in dashed)
            shown.add(str(name))
        figure.update_xaxes(title_text=x_label, row=row, col=1, rangemode="tozero")
        figure.update_yaxes(title_text=y_label if len(tasks) == 1 else "best score so far", row=row, col=1)
    figure.update_layout(height=max(MIN_PX, PANEL_PX * len(tasks) + 60), hovermode="closest",
                         plot_bgcolor="white", legend={"title": {"text": "click to hide, double-click to isolate"},
                                                       "font": {"size": 11}},
                         margin={"t": 48, "b": 40, "l": 60, "r": 16}, meta={"series": len(names)})
    figure.update_xaxes(gridcolor="#e4e7ee", zeroline=False)
    figure.update_yaxes(gridcolor="#e4e7ee", zeroline=False)
    return figure


def _add_series(figure: Any, group: Any, name: str, style: int, row: int, legend: bool, dashed: bool) -> None:
    """A series' step line (hover: its name, x and y), its band when it has one, and its end marker;
    the three share a legend group, so one click on the legend hides or shows them together."""
    import plotly.graph_objects as go

    from trace_bench.analysis.chart import MARKERS

    colour = _colour(style)
    xs, ys = group["x"].tolist(), group["best_score"].tolist()
    common = {"legendgroup": name, "showlegend": False}
    if "low" in group and "high" in group and group["low"].notna().any():
        figure.add_trace(go.Scatter(x=xs, y=group["high"].tolist(), mode="lines", line={"width": 0, "shape": "hv"},
                                    hoverinfo="skip", meta=BAND, name=name, **common), row=row, col=1)
        figure.add_trace(go.Scatter(x=xs, y=group["low"].tolist(), mode="lines", line={"width": 0, "shape": "hv"},
                                    fill="tonexty", fillcolor=_rgba(colour, 0.12), hoverinfo="skip", meta=BAND,
                                    name=name, **common), row=row, col=1)
    figure.add_trace(go.Scatter(
        x=xs, y=ys, mode="lines", name=_escape(name), legendgroup=name, showlegend=legend, meta=CURVE,
        line={"color": colour, "width": 2, "shape": "hv", "dash": "dash" if dashed else "solid"},
        hovertemplate=f"{_escape(name)}<br>x %{{x:.4g}}<br>best %{{y:.4g}}<extra></extra>"), row=row, col=1)
    symbol = {"o": "circle", "s": "square", "^": "triangle-up", "D": "diamond", "v": "triangle-down",
              "P": "cross", "X": "x", "*": "star"}[MARKERS[style % len(MARKERS)]]
    figure.add_trace(go.Scatter(
        x=xs[-1:], y=ys[-1:], mode="markers", name=name, meta=END,
        marker={"color": colour, "size": 11, "symbol": symbol, "line": {"color": "#222222", "width": 1.2}},
        hovertemplate=f"{_escape(name)} stops here<br>x %{{x:.4g}}<br>best %{{y:.4g}}<extra></extra>", **common),
        row=row, col=1)


def _escape(text: str) -> str:
    """User text for a label: plotly reads a few HTML tags (and entities) in names, and ``%{...}`` in a
    hover template."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("%{", "% {")

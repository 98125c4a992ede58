"""Curve charts for the UI (``gr.HTML``), drawn by the same function as report.html.

Gradio 6's native ``LinePlot`` loses lines and keeps a stale legend when its data is replaced (a
different run, a filter, another axis), which is exactly how the UI uses it; a server-rendered SVG
has no client state and looks the same in every browser and in screenshots.  This module only turns
the UI's long frames (``x``, ``best_score``, ``series`` and, for means over seeds, ``low``/``high``)
into :class:`trace_bench.analysis.chart.Series` (imported on first use, like all of ``analysis``).
"""

from __future__ import annotations

import html
from typing import Any

MAX_LEGEND = 24
WIDTH, HEIGHT = 820, 300


def line_chart(frame: Any, *, title: str, x_label: str, y_label: str, elem_class: str = "tb-chart",
               dashed: frozenset[str] = frozenset()) -> str:
    """The chart of a long frame, one series per ``series`` value (sorted by name, so a series keeps
    its style while the frame grows); series named in ``dashed`` are drawn dashed."""
    if frame is None or len(frame) == 0:
        return (f'<div class="{elem_class}" data-series="0" style="color:#777;padding:12px">'
                f"{html.escape(title)}: no curve points yet</div>")
    from trace_bench.analysis.chart import Series, step_chart

    series = []
    for index, (name, group) in enumerate(frame.groupby("series", sort=True)):
        group = group.sort_values("x", kind="stable")
        bands = {k: group[k].tolist() for k in ("low", "high") if k in group}
        series.append(Series(str(name), group["x"].tolist(), group["best_score"].tolist(), style=index,
                             dashed=str(name) in dashed, **bands))
    return step_chart(series, title=title, x_label=x_label, y_label=y_label, panel_px=(WIDTH, HEIGHT),
                      max_legend=MAX_LEGEND, css_class=elem_class, empty="no curve points yet")

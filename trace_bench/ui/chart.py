"""Curve charts drawn on the server as inline SVG (for ``gr.HTML``).

Gradio 6's native ``LinePlot`` loses lines and keeps a stale legend when its data is replaced
(a different run, a filter, another axis), which is exactly how the UI uses it; an SVG string
has no client state, looks the same in every browser and in screenshots, and needs no scripts.
Best-so-far curves are step functions, so series are drawn as steps; each series carries a
``<title>`` so hovering a line names it.
"""

from __future__ import annotations

import html
import math
from typing import Any

PALETTE = ("#2e86de", "#e67e22", "#27ae60", "#c0392b", "#8e44ad", "#16a085", "#d35400", "#2c3e50", "#f1c40f",
           "#7f8c8d")
MAX_LEGEND = 24
WIDTH, HEIGHT = 820, 300
LEFT, RIGHT, TOP, BOTTOM = 64, 16, 30, 44


def nice_ticks(low: float, high: float, count: int = 6) -> list[float]:
    """Round tick values covering [low, high] (1, 2 or 5 times a power of ten apart)."""
    if not (math.isfinite(low) and math.isfinite(high)):
        return [0.0]
    if high <= low:
        return [low]
    raw = (high - low) / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.floor(low / step) * step
    ticks, value = [round(first, 12)], first
    while value < high - step * 1e-9:  # the last tick is at or above ``high``
        value += step
        ticks.append(round(value, 12))
    return ticks


def _label(value: float) -> str:
    return f"{value:.4g}"


def line_chart(frame: Any, *, title: str, x_label: str, y_label: str, elem_class: str = "tb-chart",
               step: bool = True, dashed: frozenset[str] = frozenset()) -> str:
    """An SVG chart of a long frame with columns ``x``, ``best_score`` (the y value) and ``series``;
    series named in ``dashed`` are drawn first, dashed, so solid lines stay visible where they meet."""
    if frame is None or len(frame) == 0:
        return (f'<div class="{elem_class}" data-series="0" style="color:#777;padding:12px">'
                f"{html.escape(title)}: no curve points yet</div>")
    groups = [(str(name), group.sort_values("x", kind="stable")) for name, group in frame.groupby("series", sort=True)]
    groups.sort(key=lambda item: item[0] not in dashed)
    xs = [float(v) for v in frame["x"]]
    ys = [float(v) for v in frame["best_score"] if math.isfinite(float(v))]
    x_ticks = nice_ticks(min(xs), max(xs))
    y_ticks = nice_ticks(min(ys), max(ys)) if ys else [0.0]
    x_low, x_high = min(x_ticks[0], min(xs)), max(x_ticks[-1], max(xs))
    y_low, y_high = min(y_ticks[0], min(ys or [0.0])), max(y_ticks[-1], max(ys or [0.0]))
    x_span, y_span = (x_high - x_low) or 1.0, (y_high - y_low) or 1.0
    plot_w, plot_h = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def px(x: float) -> float:
        return LEFT + (x - x_low) / x_span * plot_w

    def py(y: float) -> float:
        return TOP + plot_h - (y - y_low) / y_span * plot_h

    parts = [f'<text x="{WIDTH / 2}" y="18" text-anchor="middle" font-size="14">{html.escape(title)}</text>',
             f'<rect x="{LEFT}" y="{TOP}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#ccc"/>']
    for tick in x_ticks:
        parts.append(f'<line x1="{px(tick):.1f}" x2="{px(tick):.1f}" y1="{TOP}" y2="{TOP + plot_h}" stroke="#eee"/>'
                     f'<text x="{px(tick):.1f}" y="{TOP + plot_h + 16}" text-anchor="middle" font-size="11">'
                     f"{_label(tick)}</text>")
    for tick in y_ticks:
        parts.append(f'<line x1="{LEFT}" x2="{LEFT + plot_w}" y1="{py(tick):.1f}" y2="{py(tick):.1f}" stroke="#eee"/>'
                     f'<text x="{LEFT - 6}" y="{py(tick) + 4:.1f}" text-anchor="end" font-size="11">'
                     f"{_label(tick)}</text>")
    parts.append(f'<text x="{LEFT + plot_w / 2}" y="{HEIGHT - 6}" text-anchor="middle" font-size="12">'
                 f"{html.escape(x_label)}</text>")
    parts.append(f'<text transform="translate(14 {TOP + plot_h / 2}) rotate(-90)" text-anchor="middle" '
                 f'font-size="12">{html.escape(y_label)}</text>')
    legend = []
    for index, (name, group) in enumerate(groups):
        colour = PALETTE[index % len(PALETTE)]
        points = [(float(x), float(y)) for x, y in zip(group["x"], group["best_score"], strict=True)
                  if math.isfinite(float(y))]
        coords: list[str] = []
        for i, (x, y) in enumerate(points):
            if step and i:
                coords.append(f"{px(x):.1f},{py(points[i - 1][1]):.1f}")
            coords.append(f"{px(x):.1f},{py(y):.1f}")
        label = html.escape(name)
        dash = ' stroke-dasharray="6 4"' if name in dashed else ""
        parts.append(f'<polyline class="tb-series" fill="none" stroke="{colour}" stroke-width="2"{dash} '
                     f'points="{" ".join(coords)}"><title>{label}</title></polyline>')
        if len(points) == 1:
            parts.append(f'<circle cx="{coords[0].split(",")[0]}" cy="{coords[0].split(",")[1]}" r="3" '
                         f'fill="{colour}"><title>{label}</title></circle>')
        if index < MAX_LEGEND:
            legend.append(f'<span style="margin-right:14px;white-space:nowrap"><span style="display:inline-block;'
                          f'width:12px;height:3px;background:{colour};vertical-align:middle;margin-right:4px">'
                          f"</span>{label}</span>")
    if len(groups) > MAX_LEGEND:
        legend.append(f"<span>… and {len(groups) - MAX_LEGEND} more (hover a line for its name)</span>")
    svg = (f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" width="100%" style="max-width:{WIDTH}px" role="img" '
           f'aria-label="{html.escape(title)}" xmlns="http://www.w3.org/2000/svg" font-family="sans-serif">'
           f'{"".join(parts)}</svg>')
    return (f'<div class="{elem_class}" data-series="{len(groups)}">{svg}'
            f'<div style="font-size:12px;line-height:1.8">{"".join(legend)}</div></div>')

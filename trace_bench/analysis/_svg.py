"""Inline SVG step charts for report.html: no JavaScript, no plotting library, no external files.

Best-so-far curves are step functions, so lines are drawn as steps (flat until the next point) with
the confidence band as a translucent step polygon behind each line.  All text is escaped.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from trace_bench.analysis._html import Safe, number, text

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2",
           "#7f7f7f", "#bcbd22")


@dataclass(frozen=True)
class Series:
    """One arm's mean curve with its interval; ``colour_index`` keeps an arm's colour across charts."""

    label: str
    x: Sequence[float]
    mean: Sequence[float]
    low: Sequence[float]
    high: Sequence[float]
    colour_index: int = 0


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values (1, 2, 2.5 or 5 times a power of ten) covering [low, high]."""
    if not (math.isfinite(low) and math.isfinite(high)) or high <= low:
        return [low] if math.isfinite(low) else []
    raw = (high - low) / max(count - 1, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 2.5, 5, 10) if m * power >= raw)
    first = math.ceil(low / step - 1e-9) * step
    ticks = []
    value = first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    return ticks


def _steps(xs: Sequence[float], ys: Sequence[float]) -> list[tuple[float, float]]:
    points: list[tuple[float, float]] = []
    for index, (x, y) in enumerate(zip(xs, ys, strict=True)):
        if index:
            points.append((x, points[-1][1]))
        points.append((x, y))
    return points


def step_chart(series: Sequence[Series], *, title: str, x_label: str, y_label: str, width: int = 440,
               height: int = 250) -> Safe:
    """An <svg> element with one step line and band per series and a legend underneath."""
    finite = [(x, v) for s in series for x, lo, hi in zip(s.x, s.low, s.high, strict=True)
              for v in (lo, hi) if math.isfinite(x) and math.isfinite(v)]
    left, right, top, bottom = 54, 14, 26, 42
    plot_w, plot_h = width - left - right, height - top - bottom
    legend_h = 15 * len(series) + 6
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + legend_h}" '
             f'viewBox="0 0 {width} {height + legend_h}" role="img" aria-label="{text(title)}">',
             f'<text x="{width / 2:.0f}" y="16" text-anchor="middle" font-size="12" font-weight="600">'
             f"{text(title)}</text>"]
    if not finite:
        parts.append(f'<text x="{width / 2:.0f}" y="{height / 2:.0f}" text-anchor="middle" font-size="12" '
                     f'fill="#777">no data on this axis</text></svg>')
        return Safe("".join(parts))
    x_min, x_max = min(p[0] for p in finite), max(p[0] for p in finite)
    y_min, y_max = min(p[1] for p in finite), max(p[1] for p in finite)
    if x_max == x_min:
        x_min, x_max = x_min - 0.5, x_max + 0.5
    if y_max == y_min:
        y_min, y_max = y_min - 0.5, y_max + 0.5
    pad = (y_max - y_min) * 0.05
    y_min, y_max = y_min - pad, y_max + pad

    def sx(x: float) -> float:
        return left + (x - x_min) / (x_max - x_min) * plot_w

    def sy(y: float) -> float:
        return top + (1 - (y - y_min) / (y_max - y_min)) * plot_h

    parts.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="#fff" stroke="#aab"/>')
    for tick in nice_ticks(y_min, y_max):
        parts.append(f'<line x1="{left}" x2="{left + plot_w}" y1="{sy(tick):.1f}" y2="{sy(tick):.1f}" '
                     f'stroke="#eef"/><text x="{left - 5}" y="{sy(tick) + 4:.1f}" text-anchor="end" '
                     f'font-size="10">{text(number(tick, 3))}</text>')
    for tick in nice_ticks(x_min, x_max):
        parts.append(f'<text x="{sx(tick):.1f}" y="{top + plot_h + 13}" text-anchor="middle" font-size="10">'
                     f"{text(number(tick, 3))}</text>")
    parts.append(f'<text x="{left + plot_w / 2:.0f}" y="{top + plot_h + 30}" text-anchor="middle" '
                 f'font-size="11">{text(x_label)}</text>')
    parts.append(f'<text x="12" y="{top + plot_h / 2:.0f}" font-size="11" text-anchor="middle" '
                 f'transform="rotate(-90 12 {top + plot_h / 2:.0f})">{text(y_label)}</text>')
    for index, item in enumerate(series):
        colour = PALETTE[item.colour_index % len(PALETTE)]
        keep = [i for i, x in enumerate(item.x) if math.isfinite(x) and math.isfinite(item.mean[i])]
        xs = [item.x[i] for i in keep]
        upper = _steps(xs, [item.high[i] if math.isfinite(item.high[i]) else item.mean[i] for i in keep])
        lower = _steps(xs, [item.low[i] if math.isfinite(item.low[i]) else item.mean[i] for i in keep])
        if keep:
            band = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in [*upper, *reversed(lower)])
            line = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in _steps(xs, [item.mean[i] for i in keep]))
            parts.append(f'<polygon points="{band}" fill="{colour}" fill-opacity="0.13" stroke="none"/>'
                         f'<polyline points="{line}" fill="none" stroke="{colour}" stroke-width="1.8"/>')
        legend_y = height + 15 * index
        parts.append(f'<rect x="{left}" y="{legend_y}" width="10" height="10" fill="{colour}"/>'
                     f'<text x="{left + 15}" y="{legend_y + 9}" font-size="11">{text(item.label)}</text>')
    parts.append("</svg>")
    return Safe("".join(parts))

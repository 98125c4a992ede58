"""Tiny inline-SVG line charts, so report.html needs no JavaScript, CDN or plotting library."""

from __future__ import annotations

import html
import math
from collections.abc import Sequence

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#17becf", "#8c564b", "#e377c2", "#7f7f7f")


def _ticks(low: float, high: float, count: int = 4) -> list[float]:
    if not math.isfinite(low) or not math.isfinite(high) or high <= low:
        return [low] if math.isfinite(low) else []
    step = (high - low) / count
    return [low + i * step for i in range(count + 1)]


def line_chart(series: Sequence[tuple[str, Sequence[float], Sequence[float]]], *, title: str, x_label: str,
               y_label: str, width: int = 520, height: int = 300) -> str:
    """``series`` = [(label, xs, ys)]; returns an <svg> element (text escaped)."""
    points = [(x, y) for _, xs, ys in series for x, y in zip(xs, ys, strict=False)
              if math.isfinite(x) and math.isfinite(y)]
    left, right, top, bottom = 60, 20, 30, 45
    plot_w, plot_h = width - left - right, height - top - bottom
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height + 18 * len(series)}" '
             f'role="img" aria-label="{html.escape(title)}">',
             f'<text x="{width / 2}" y="18" text-anchor="middle" font-size="13">{html.escape(title)}</text>']
    if not points:
        parts.append(f'<text x="{width / 2}" y="{height / 2}" text-anchor="middle" font-size="12">no data</text></svg>')
        return "".join(parts)
    x_min, x_max = min(p[0] for p in points), max(p[0] for p in points)
    y_min, y_max = min(p[1] for p in points), max(p[1] for p in points)
    if x_max == x_min:
        x_max = x_min + 1
    if y_max == y_min:
        y_min, y_max = y_min - 0.5, y_max + 0.5

    def sx(x: float) -> float:
        return left + (x - x_min) / (x_max - x_min) * plot_w

    def sy(y: float) -> float:
        return top + (1 - (y - y_min) / (y_max - y_min)) * plot_h

    parts.append(f'<rect x="{left}" y="{top}" width="{plot_w}" height="{plot_h}" fill="none" stroke="#999"/>')
    for tick in _ticks(y_min, y_max):
        parts.append(f'<text x="{left - 6}" y="{sy(tick) + 4:.1f}" text-anchor="end" font-size="10">{tick:.3g}</text>')
    for tick in _ticks(x_min, x_max):
        parts.append(f'<text x="{sx(tick):.1f}" y="{top + plot_h + 14}" text-anchor="middle" font-size="10">'
                     f'{tick:.3g}</text>')
    parts.append(f'<text x="{left + plot_w / 2}" y="{top + plot_h + 32}" text-anchor="middle" font-size="11">'
                 f'{html.escape(x_label)}</text>')
    parts.append(f'<text x="14" y="{top + plot_h / 2}" font-size="11" transform="rotate(-90 14 {top + plot_h / 2})" '
                 f'text-anchor="middle">{html.escape(y_label)}</text>')
    for index, (label, xs, ys) in enumerate(series):
        color = PALETTE[index % len(PALETTE)]
        coords = [(sx(x), sy(y)) for x, y in zip(xs, ys, strict=False) if math.isfinite(x) and math.isfinite(y)]
        if coords:
            path = " ".join(f"{x:.1f},{y:.1f}" for x, y in coords)
            parts.append(f'<polyline fill="none" stroke="{color}" stroke-width="2" points="{path}"/>')
        legend_y = height + 14 * index + 4
        parts.append(f'<rect x="{left}" y="{legend_y}" width="10" height="10" fill="{color}"/>'
                     f'<text x="{left + 14}" y="{legend_y + 9}" font-size="11">{html.escape(label)}</text>')
    parts.append("</svg>")
    return "".join(parts)

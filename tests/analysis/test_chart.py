"""The shared chart (report.html and the UI): axes scaled to what matters, legends whole, lines apart,
user text shown literally, matplotlib loaded only when a chart is drawn."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("matplotlib")

from tests.analysis.runs_kit import job, make_run  # noqa: E402
from trace_bench.analysis import chart, write_report  # noqa: E402
from trace_bench.analysis.chart import Panel, Series, curve_chart, step_chart, style_of  # noqa: E402

TEXT = re.compile(r"<text ([^>]*)>([^<]*)</text>")


def _texts(html: str) -> list[tuple[dict[str, str], str]]:
    """(attributes, content) of every <text> element (matplotlib keeps text as text)."""
    return [(dict(re.findall(r'([\w-]+)="([^"]*)"', attrs)), content) for attrs, content in TEXT.findall(html)]


def _number(label: str) -> float | None:
    try:
        return float(label.replace("\u2212", "-"))
    except ValueError:
        return None


def _tick_values(html: str) -> list[float]:
    return [v for _, content in _texts(html) if (v := _number(content)) is not None]


def test_two_seed_bands_do_not_stretch_the_y_axis() -> None:
    """Scores in [-3, 1] with bands to -20 and +5 (two seeds): the axis follows the means."""
    wide = Series("A", [0, 1, 2, 3], [-3, -2, -1, 1], low=[-20, -12, -8, -4], high=[5, 5, 5, 5])
    ticks = _tick_values(step_chart([wide], title="t", x_label="LLM calls", y_label="best"))
    assert ticks and min(ticks) >= -3.5 and max(ticks) <= 3.5


def test_non_negative_means_keep_the_y_axis_non_negative() -> None:
    series = Series("A", [0, 500, 1000], [0.0, 0.4, 0.9], low=[-0.8, -0.3, 0.1], high=[0.8, 1.2, 1.6])
    html = step_chart([series], title="t", x_label="tokens", y_label="best")
    assert all(v >= 0 for v in _tick_values(html))


def test_spend_axes_start_at_a_zero_tick() -> None:
    series = Series("A", [0.4, 1.3, 2.9], [0.1, 0.2, 0.3])
    texts = _texts(step_chart([series], title="t", x_label="wall time (s)", y_label="best"))
    assert any(_number(content) == 0 for _, content in texts)


def test_long_legend_labels_wrap_inside_the_chart() -> None:
    label = "PrioritySearch [ps_candidates=2,ps_proposals=2,ps_steps=3,ps_memory=10,ps_score_range=[0,1]]"
    series = [Series(f"{label} #{i}", [0, 1, 2], [0.1 * i, 0.2, 0.3], style=i) for i in range(30)]
    html = step_chart(series, title="t", x_label="LLM calls", y_label="best", max_legend=24)
    width, height = (float(v) for v in re.search(r'viewBox="0 0 ([\d.]+) ([\d.]+)"', html).groups())
    shown = " ".join(content for _, content in _texts(html))
    assert "ps_score_range=[0,1]] #0" in shown and "and 6 more" in shown
    for attrs, content in _texts(html):
        size = float(re.search(r"font-size: ?([\d.]+)px", attrs.get("style", "")).group(1))
        x, y = float(attrs.get("x", 0)), float(attrs.get("y", 0))
        assert 0 <= y <= height, content
        if "rotate(-90" in attrs.get("transform", ""):
            continue
        extent = 0.62 * size * len(content)  # a generous average glyph width
        anchor = re.search(r"text-anchor: ?(\w+)", attrs.get("style", ""))
        start = x - {"middle": extent / 2, "end": extent}.get(anchor.group(1) if anchor else "start", 0)
        assert 0 <= start and start + extent <= width + 1, content


def test_neighbouring_series_differ_in_colour_dash_and_marker() -> None:
    styles = [style_of(i) for i in range(40)]
    assert len(set(map(str, styles))) == 40
    for a, b in zip(styles, styles[1:], strict=False):
        assert a[0] != b[0] and a[1] != b[1] and a[2] != b[2]
    same = [Series(name, [0, 1, 2], [0.5, 0.5, 0.5], style=i) for i, name in enumerate("AB")]
    dashes = re.findall(r"stroke-dasharray: ?([\d., ]+)", step_chart(same, title="t", x_label="x", y_label="y"))
    assert dashes  # the second line is dashed, so it shows over the first


def test_user_text_is_escaped_and_literal() -> None:
    series = Series("<script>alert(1)</script> $x^2$ & co", [0, 1], [0.0, 1.0])
    html = step_chart([series], title="<b>t</b>", x_label="x", y_label="y")
    assert "<script" not in html and "<b>" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt; $x^2$ &amp; co" in html


def test_panels_share_one_legend_and_say_when_empty() -> None:
    a, b = Series("A", [0, 1], [0.0, 1.0], style=0), Series("B", [0, 1], [1.0, 1.0], style=1)
    html = curve_chart([Panel("p1", "x", [a, b]), Panel("p2", "x", [a]), Panel("p3", "x", [])], y_label="y",
                       columns=2)
    assert html.count("<svg") == 1 and 'data-series="2"' in html and "no data on this axis" in html
    assert [content for _, content in _texts(html)].count("A") == 1
    assert 'data-series="0"' in curve_chart([Panel("p", "x", [])], y_label="y")


def test_report_tables_scroll_instead_of_overflowing(tmp_path: Path) -> None:
    run = make_run(tmp_path, "r", [job("s:t", "A", 1, 1.0), job("s:t", "B", 1, 0.5)])
    html = write_report(run).read_text()
    rule = re.search(r"table\{([^}]*)\}", html).group(1)
    assert "overflow-x:auto" in rule and "display:block" in rule and "max-width:100%" in rule


def test_matplotlib_is_imported_only_to_draw() -> None:
    code = ("import sys, trace_bench.analysis, trace_bench.analysis.report, trace_bench.cli.main, "
            "trace_bench.runner.run, trace_bench.ui.chart\n"
            "assert 'matplotlib' not in sys.modules, 'matplotlib imported'\n")
    subprocess.run([sys.executable, "-c", code], check=True, timeout=600)


def test_a_chart_does_not_depend_on_the_charts_drawn_before() -> None:
    """Figures are reused per thread; nothing of one chart may leak into the next."""
    first = [Panel("a", "x", [Series("A", [0, 1, 2], [0.1, 0.5, 0.9], [0, 0, 0], [1, 1, 1])]),
             Panel("b", "x", [Series("A", [0, 3], [0.1, 0.9])])]
    other = [Panel("c", "x", []), Panel("d", "x", [Series("Z" * 80, [0, 100], [-5.0, 7.0], style=3)])]
    chart._FIGURES.__dict__.clear()  # the first drawing uses a new figure
    before = curve_chart(first, y_label="y", columns=2)
    curve_chart(other, y_label="other", columns=1, panel_px=(300, 500))
    assert curve_chart(first, y_label="y", columns=2) == before


def test_each_curve_ends_with_an_end_marker_where_its_data_stops() -> None:
    """An arm that stopped early ends where it stopped, marked, not flat to the chart's right edge."""
    html = step_chart([Series("long", [0, 10], [0.1, 0.9], style=0), Series("short", [0, 3], [0.2, 0.5], style=1)],
                      title="t", x_label="x", y_label="y")
    ends = [re.search(r'<use xlink:href="[^"]*" x="([\d.]+)"', part).group(1)
            for part in re.split(r'<g id="tb-end-\d+">', html)[1:]]
    assert len(ends) == 2 and float(ends[1]) < float(ends[0]) * 0.5


def _frontier_rows(arms: dict[str, tuple[float, float, float, float]]) -> Any:
    """Frontier rows of one task: arm -> (cost, score mean, score low, score high)."""
    import pandas as pd

    return pd.DataFrame([{"trainer": arm, "params_label": "default", "cost_axis": "tokens", "metric": "score_best",
                          "cost_mean": cost, "cost_low": cost * 0.9, "cost_high": cost * 1.1, "score_mean": mean,
                          "score_low": low, "score_high": high, "on_frontier": True, "complete": True, "n": 3,
                          "planned": 3} for arm, (cost, mean, low, high) in arms.items()])


def test_a_baseline_far_below_does_not_squash_the_frontier_chart() -> None:
    """A NoOp arm at -3 beside arms near 0: drawn on the bottom edge with its score written, while the
    score axis spans the other arms' intervals; arms of one scale keep the whole axis."""
    from trace_bench.analysis.frontier_chart import frontier_chart

    rows = _frontier_rows({"NoOpTrainer": (0.0, -3.0, -3.0, -3.0), "PS": (900.0, -0.09, -0.23, 0.0),
                           "PSsmall": (300.0, -0.15, -0.2, -0.1)})
    html = frontier_chart(rows, title="t")
    assert 'data-below="1"' in html and "\u2193 -3" in html and "below the chart: -3" in html
    ticks = [v for v in _tick_values(html) if v < 0]
    assert ticks and min(ticks) > -0.5, ticks
    near = frontier_chart(_frontier_rows({"A": (0.0, -1.0, -1.5, -0.5), "B": (9.0, -0.09, -0.23, 0.0)}), title="t")
    assert 'data-below="0"' in near

"""The UI's interactive charts (plotly figures for gr.Plot), built in-process: one legend entry per
series whose click hides the curve, its band and its end marker together; each curve stops at an end
marker where its data stops; user text shown literally; the params-variant view's axes."""

from __future__ import annotations

import pytest

pytest.importorskip("plotly")
pd = pytest.importorskip("pandas")

from trace_bench.ui.interactive import BAND, CURVE, END, curve_figure  # noqa: E402
from trace_bench.ui.params_view import params_figure, parse_params  # noqa: E402


def _frame() -> object:
    """Arm ``long`` runs to 10 calls, arm ``short <b>`` stops at 3 (with a band); two tasks."""
    rows = []
    for task in ("t1", "t2"):
        rows += [{"task": task, "series": "long", "x": x, "best_score": y, "low": y - 0.1, "high": y + 0.1}
                 for x, y in ((0, 0.1), (5, 0.5), (10, 0.9))]
        rows += [{"task": task, "series": "short <b>", "x": x, "best_score": y, "low": y, "high": y}
                 for x, y in ((0, 0.2), (3, 0.4))]
    return pd.DataFrame(rows)


def test_curves_toggle_as_one_and_end_where_their_data_stops() -> None:
    figure = curve_figure(_frame(), title="best", x_label="LLM calls", y_label="best")
    curves = [t for t in figure.data if t.meta == CURVE]
    ends = [t for t in figure.data if t.meta == END]
    assert len(curves) == 4 and len(ends) == 4 and figure.layout.meta["series"] == 2
    assert [t.name for t in figure.data if t.showlegend is not False] == ["long", "short &lt;b&gt;"], \
        "one legend entry per series over both task panels, its text escaped"
    for end in ends:  # the end marker sits on its curve's last point, in the curve's legend group
        (curve,) = [c for c in curves if c.legendgroup == end.legendgroup and c.xaxis == end.xaxis]
        assert (end.x[0], end.y[0]) == (curve.x[-1], curve.y[-1])
    short = [e.x[0] for e in ends if e.legendgroup == "short <b>"]
    assert short == [3, 3], "the arm that stopped at 3 calls ends there, not at 10"
    assert all(t.legendgroup in {"long", "short <b>"} for t in figure.data if t.meta == BAND)
    assert all(c.line.shape == "hv" for c in curves), "best-so-far curves are steps"
    assert "<b>" not in curves[1].hovertemplate


def test_an_empty_frame_says_so() -> None:
    figure = curve_figure(pd.DataFrame(columns=["x", "best_score", "series"]), title="t", x_label="x", y_label="y")
    assert figure.layout.meta["series"] == 0 and "no curve points yet" in figure.layout.annotations[0].text


def test_params_view_has_an_axis_per_parameter_and_a_score() -> None:
    assert parse_params("ps_steps=3,ps_candidates=2") == {"ps_steps": "3", "ps_candidates": "2"}
    assert parse_params("default") == {} and parse_params("tags=[a,b],k=1") == {"tags": "[a,b]", "k": "1"}
    board = [{"task": "t", "trainer": "PS", "params_label": "ps_steps=3,mode=fast", "mean": 0.9, "mean_llm_calls": 12},
             {"task": "t", "trainer": "PS", "params_label": "ps_steps=1,mode=slow", "mean": 0.5, "mean_llm_calls": 4},
             {"task": "t", "trainer": "NoOp", "params_label": "default", "mean": 0.1, "mean_llm_calls": 0},
             {"task": "t", "trainer": "X", "params_label": "default", "mean": None}]
    (trace,) = params_figure(board).data
    axes = {d.label: d for d in trace.dimensions}
    assert list(axes) == ["task", "trainer", "mode", "ps_steps", "mean LLM calls", "mean score"]
    assert axes["ps_steps"].ticktext == ("-", "1", "3"), "NoOp has no ps_steps: the axis is categorical"
    assert list(axes["mean LLM calls"].values) == [12, 4, 0]
    assert list(axes["mean score"].values) == [0.9, 0.5, 0.1] and list(trace.line.color) == [1.0, 0.5, 0.0]
    assert params_figure([]).layout.meta["series"] == 0

"""The params-variant view: a parallel-coordinates chart over a run's arms (one line per task and arm),
with an axis per task, trainer and parameter of the variants, then the arm's mean LLM calls and mean
score, coloured by the score's place within its task (tasks score on scales of their own).

Drag along an axis to keep only the lines through that range; drag an axis sideways to reorder.
Read from the run's leaderboard.csv (the verdict's means), so it agrees with the Browse table.
"""

from __future__ import annotations

import math
import re
from typing import Any

from trace_bench.ui.interactive import message_figure

TITLE = "params variants: one line per task and arm"
#: where a label's next ``key=value`` starts (a value may hold commas, as a list does)
_NEXT_PARAM = re.compile(r",(?=\s*[A-Za-z_][\w.]*=)")


def parse_params(label: str) -> dict[str, str]:
    """``ps_steps=3,ps_candidates=2`` as a dict; ``default`` (or a label without ``=``) as none."""
    pairs = (part.split("=", 1) for part in _NEXT_PARAM.split(label or "") if "=" in part)
    return {key.strip(): value.strip() for key, value in pairs}


def _number(value: Any) -> float | None:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def _dimension(label: str, values: list[Any]) -> dict[str, Any]:
    """A numeric axis when every value is a number, else a categorical one (ticks are the values)."""
    numbers = [_number(v) for v in values]
    if all(n is not None for n in numbers):
        return {"label": label, "values": numbers}
    names = sorted({str(v) for v in values})
    codes = {name: index for index, name in enumerate(names)}
    return {"label": label, "values": [codes[str(v)] for v in values], "tickvals": list(range(len(names))),
            "ticktext": names, "range": [-0.5, len(names) - 0.5] if len(names) > 1 else [-1, 1]}


def _place_in_task(rows: list[dict[str, Any]]) -> list[float]:
    """Each arm's mean score as 0 (its task's worst arm) to 1 (its task's best); 1 when all tie."""
    by_task: dict[str, list[float]] = {}
    for row in rows:
        by_task.setdefault(str(row["task"]), []).append(float(row["mean"]))
    places = []
    for row in rows:
        low, high = min(by_task[str(row["task"])]), max(by_task[str(row["task"])])
        places.append((float(row["mean"]) - low) / (high - low) if high > low else 1.0)
    return places


def params_figure(board: list[dict[str, Any]]) -> Any:
    """The chart of a run's leaderboard rows; a figure that says why when no arm has a mean score."""
    import plotly.graph_objects as go

    rows = [r for r in board if _number(r.get("mean")) is not None]
    if not rows:
        return message_figure(TITLE, "no arm has a mean score yet")
    params = [parse_params(str(r.get("params_label") or "")) for r in rows]
    keys = sorted({key for p in params for key in p})
    dimensions = [_dimension("task", [r["task"] for r in rows])]
    if len({r["trainer"] for r in rows}) > 1:
        dimensions.append(_dimension("trainer", [r["trainer"] for r in rows]))
    dimensions += [_dimension(key, [p.get(key, "-") for p in params]) for key in keys]
    if all(_number(r.get("mean_llm_calls")) is not None for r in rows):
        dimensions.append(_dimension("mean LLM calls", [r["mean_llm_calls"] for r in rows]))
    dimensions.append(_dimension("mean score", [r["mean"] for r in rows]))
    places = _place_in_task(rows)
    figure = go.Figure(go.Parcoords(
        dimensions=dimensions,
        line={"color": places, "colorscale": "Viridis", "cmin": 0, "cmax": 1, "showscale": True,
              "colorbar": {"title": {"text": "place in task<br>(1 = best)"}, "thickness": 12}}))
    figure.update_layout(title={"text": TITLE, "font": {"size": 14}}, height=420,
                         margin={"t": 90, "b": 40, "l": 170, "r": 70}, meta={"arms": len(rows), "params": keys})
    return figure

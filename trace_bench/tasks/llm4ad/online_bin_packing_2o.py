"""llm4ad:online_bin_packing_2o: online bin packing with two objectives, bins and cost.

Same instances and packing rule as ``llm4ad:online_bin_packing``.  Objectives, both minimized:
``bins`` (mean bins used) and ``cost`` (mean Python lines the candidate executes per item,
counted with ``sys.settrace`` on the candidate's own code only).  The original used wall time as
the second objective, which differs from run to run; a line count is a deterministic proxy for
the same thing, so two evaluations of one program always agree.  The guide's scalar score is
the weighted sum that ``objective_config`` describes.

The bins are counted by trusted code from the replayed placements.  The line count can only be
taken where the candidate runs, so it is the one figure its process reports; the trusted side
takes no less than :data:`MIN_LINES_PER_ITEM` (a one-statement function's count) per sequence,
so a tampered count gains nothing over an honest one-line heuristic.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from trace_bench.tasks.llm4ad import online_bin_packing as single
from trace_bench.tasks.llm4ad.evalkit import (
    CANDIDATE_FILENAME,
    InvalidSolution,
    Recorder,
    finite,
    load_candidate,
    per_instance,
    replay_all,
)
from trace_bench.tasks.llm4ad.problem import CodeTask, Run, build_problem

MIN_LINES_PER_ITEM = 1.0

VECTORIZED_GAP_AWARE = '''import numpy as np


def priority(item, bins):
    """Gap-aware best fit in one vectorized expression (few Python lines per call)."""
    gap = bins - item
    return -gap - 30.0 * ((bins < bins.max()) & (gap > 2) & (gap < 20))
'''

TASK = CodeTask(
    name="online_bin_packing_2o",
    entry="priority",
    signature=single.TASK.signature,
    description=single.TASK.description + (" Two objectives, both minimized: the number of bins used and the "
                                           "cost of the heuristic (Python lines it executes per item)."),
    constraints=single.TASK.constraints,
    template=single.TEMPLATE,
    stub_candidates=(single.BEST_FIT, single.GAP_AWARE, VECTORIZED_GAP_AWARE),
    evaluator=f"{__name__}:evaluate",
    scoring="-(bins + 0.2 * lines per item)",
    defaults=dict(single.TASK.defaults),
    objectives=("bins", "cost"),
    objective_weights={"bins": 1.0, "cost": 0.2},
    minimize=("bins", "cost"),
)


class LineCounter:
    """Counts 'line' events in frames of the candidate's code; other frames are not traced."""

    def __init__(self) -> None:
        self.lines = 0

    def global_trace(self, frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename != CANDIDATE_FILENAME:
            return None
        return self.local_trace

    def local_trace(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "line":
            self.lines += 1
        return self.local_trace

    def wrap(self, func: Any) -> Any:
        def counted(item: float, bins: np.ndarray) -> Any:
            sys.settrace(self.global_trace)
            try:
                return func(item, bins)
            finally:
                tampered = sys.gettrace() != self.global_trace
                sys.settrace(None)
                if tampered:
                    raise InvalidSolution("priority must not change the tracer (sys.settrace)")

        return counted


def solve(payload: dict[str, Any]) -> dict[str, list[Any]]:
    """Sandbox target: the placements per sequence, and the lines the candidate ran per item."""
    priority = load_candidate(payload["program"], TASK.entry)
    placements, costs = [], []
    for items in single.sequences_for(payload):
        counter = LineCounter()
        recorder = Recorder(single.by_priority(counter.wrap(priority)))
        single.pack(recorder, items)
        placements.append(recorder.decisions())
        costs.append(counter.lines / len(items))
    return {"placements": placements, "costs": costs}


def evaluate(payload: dict[str, Any], run: Run) -> dict[str, Any]:
    """Trusted: bins from the replayed placements; the self-reported line count, floored."""
    sequences = single.sequences_for(payload)
    answer = run(f"{__name__}:solve", payload)
    if not isinstance(answer, dict):
        raise InvalidSolution("the evaluation returned no placements")
    used = replay_all(answer.get("placements"), len(sequences), lambda replay, i: single.pack(replay, sequences[i]))
    costs = [max(MIN_LINES_PER_ITEM, finite(c, "the line count")) for c in per_instance(answer.get("costs"),
                                                                                        len(sequences), "costs")]
    bins, cost = float(np.mean(used)), float(np.mean(costs))
    worst = int(np.argmax(used))
    return {"objectives": {"bins": bins, "cost": cost}, "instance_scores": used,
            "worst": f"sequence #{worst} needed the most bins ({used[worst]})",
            "summary": f"Mean bins used {bins:.2f} over {len(used)} sequences of {payload['n_items']} items; "
                       f"cost {cost:.2f} Python lines per item (both lower is better)."}


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    return build_problem(TASK, eval_kwargs)

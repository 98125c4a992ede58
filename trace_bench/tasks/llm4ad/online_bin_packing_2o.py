"""llm4ad:online_bin_packing_2o: online bin packing with two objectives, bins and cost.

Same instances and packing rule as ``llm4ad:online_bin_packing``.  Objectives, both minimized:
``bins`` (mean bins used) and ``cost`` (mean Python lines the candidate executes per item,
counted with ``sys.settrace`` on the candidate's own code only).  The original used wall time as
the second objective, which differs from run to run; a line count is a deterministic proxy for
the same thing, so two evaluations of one program always agree.  The guide's scalar score is
the weighted sum that ``objective_config`` describes.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np

from trace_bench.tasks.llm4ad import online_bin_packing as single
from trace_bench.tasks.llm4ad.evalkit import CANDIDATE_FILENAME, InvalidSolution, load_candidate
from trace_bench.tasks.llm4ad.problem import CodeTask, build_problem

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
    evaluator="trace_bench.tasks.llm4ad.online_bin_packing_2o:evaluate",
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


def evaluate(payload: dict[str, Any]) -> dict[str, Any]:
    priority = load_candidate(payload["program"], TASK.entry)
    sequences = single.instances(int(payload["seed"]), int(payload["n_instances"]), int(payload["n_items"]))
    used, costs = [], []
    for items in sequences:
        counter = LineCounter()
        used.append(single.pack(counter.wrap(priority), items))
        costs.append(counter.lines / len(items))
    bins, cost = float(np.mean(used)), float(np.mean(costs))
    worst = int(np.argmax(used))
    return {"objectives": {"bins": bins, "cost": cost}, "instance_scores": used,
            "worst": f"sequence #{worst} needed the most bins ({used[worst]})",
            "summary": f"Mean bins used {bins:.2f} over {len(used)} sequences of {payload['n_items']} items; "
                       f"cost {cost:.2f} Python lines per item (both lower is better)."}


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    return build_problem(TASK, eval_kwargs)

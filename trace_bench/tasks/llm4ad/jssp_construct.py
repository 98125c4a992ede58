"""llm4ad:jssp_construct: a dispatching rule for the job-shop scheduling problem.

Instances: ``n_jobs`` jobs, each visiting all ``n_machines`` machines once in a random order with
integer durations 1..20 (seeded, Taillard-style).  A schedule is built one operation at a time:
``select_next_operation`` sees the next operation of every unfinished job and picks one, which
starts as soon as both its machine and its job are free.  Score = -mean makespan.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from trace_bench.tasks.llm4ad.evalkit import InvalidSolution, as_int, constructive, dims, rng
from trace_bench.tasks.llm4ad.problem import CodeTask, build_problem

TEMPLATE = '''import numpy as np


def select_next_operation(operations, machine_ready, job_ready, remaining_work):
    """Always continue the job with the lowest index."""
    return 0
'''

EARLIEST_START = '''import numpy as np


def select_next_operation(operations, machine_ready, job_ready, remaining_work):
    """Earliest start time; ties go to the shorter operation."""
    start = operations[:, 3]
    return int(np.lexsort((operations[:, 2], start))[0])
'''

EARLIEST_START_MWKR = '''import numpy as np


def select_next_operation(operations, machine_ready, job_ready, remaining_work):
    """Among operations that can start soonest (within a small window), favour the job with most work left."""
    start = operations[:, 3]
    window = start <= start.min() + 0.5 * operations[:, 2].min()
    work = remaining_work[operations[:, 0].astype(int)]
    score = np.where(window, work, -np.inf)
    return int(np.argmax(score))
'''

TASK = CodeTask(
    name="jssp_construct",
    entry="select_next_operation",
    signature="(operations: np.ndarray, machine_ready: np.ndarray, job_ready: np.ndarray, "
              "remaining_work: np.ndarray) -> int",
    description=("Job-shop scheduling, constructive: every job is a fixed sequence of operations, one per machine; "
                 "a machine runs one operation at a time. At each step select_next_operation gets operations "
                 "(one row per unfinished job: [job, machine, duration, earliest_start]), the time each machine "
                 "and each job becomes free, and each job's remaining processing time, and returns the row "
                 "index of the operation to schedule next. Minimize the makespan."),
    constraints="Return a row index of operations (0 <= index < len(operations)).",
    template=TEMPLATE,
    stub_candidates=(EARLIEST_START, EARLIEST_START_MWKR),
    evaluator=f"{__name__}:evaluate",
    scoring="-mean makespan",
    defaults={"n_instances": 8, "n_jobs": 10, "n_machines": 5},
)


def instances(seed: int, n_instances: int, n_jobs: int, n_machines: int) -> list[tuple[np.ndarray, np.ndarray]]:
    gen = rng(seed, 6)
    out = []
    for _ in range(n_instances):
        machines = np.array([gen.permutation(n_machines) for _ in range(n_jobs)])
        durations = gen.integers(1, 21, size=(n_jobs, n_machines)).astype(float)
        out.append((machines, durations))
    return out


def makespan(select: Any, machines: np.ndarray, durations: np.ndarray) -> float:
    n_jobs, n_machines = machines.shape
    next_op = np.zeros(n_jobs, dtype=int)
    machine_ready, job_ready = np.zeros(n_machines), np.zeros(n_jobs)
    remaining = durations.sum(axis=1)
    for _ in range(n_jobs * n_machines):
        jobs = np.flatnonzero(next_op < n_machines)
        m = machines[jobs, next_op[jobs]]
        d = durations[jobs, next_op[jobs]]
        operations = np.column_stack([jobs, m, d, np.maximum(machine_ready[m], job_ready[jobs])]).astype(float)
        k = as_int(select(operations.copy(), machine_ready.copy(), job_ready.copy(), remaining.copy()),
                   "select_next_operation's return value")
        if not 0 <= k < len(jobs):
            raise InvalidSolution(f"select_next_operation returned {k}; there are {len(jobs)} operations")
        job, machine = int(jobs[k]), int(m[k])
        end = operations[k, 3] + d[k]
        machine_ready[machine] = job_ready[job] = end
        remaining[job] -= d[k]
        next_op[job] += 1
    return float(job_ready.max())


def _data(payload: dict[str, Any]) -> list[tuple[np.ndarray, np.ndarray]]:
    return instances(*dims(payload, "n_jobs", "n_machines"))


def _summary(mean: float, spans: list[Any], data: Sequence[Any], payload: dict[str, Any]) -> str:
    bounds = [max(d.sum(axis=1).max(), max(d[m == k].sum() for k in range(m.shape[1]))) for m, d in data]
    gap = 100.0 * float(np.mean([s / b - 1 for s, b in zip(spans, bounds, strict=True)]))
    return (f"Mean makespan {mean:.2f} over {len(spans)} instances of {payload['n_jobs']} jobs x "
            f"{payload['n_machines']} machines; {gap:.1f}% above a simple lower bound (lower is better).")


solve, evaluate = constructive(TASK, _data, lambda select, instance: makespan(select, *instance), label="makespan",
                               higher_is_better=False, fmt=".0f", summary=_summary)


def build_trace_problem(**eval_kwargs: Any) -> dict[str, Any]:
    return build_problem(TASK, eval_kwargs)

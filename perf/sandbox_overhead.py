"""The sandbox's overhead per call, for calls without and with a process budget.

Prints, with the load average first, the median and 99th percentile of ``--calls`` calls back to back
of a target that returns at once (after the sandbox is warm): first calls without a process budget
(the default; targets < 30 ms and < 100 ms), then calls with ``max_processes=2`` (what a task
folder's evaluator gets: since QA finding F4 such a call also mounts a private ``/dev/shm``).  Run
it with an older tree first on ``PYTHONPATH`` for a before/after.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # a tree on PYTHONPATH wins (before/after runs)

from _util import report  # noqa: E402

import trace_bench  # noqa: E402
from trace_bench.sandbox import SandboxLimits, run_sandboxed  # noqa: E402


def overhead(calls: int, processes: int) -> tuple[float, float]:
    limits = SandboxLimits(wall_s=30, max_processes=processes)
    assert run_sandboxed("trace_bench.sandbox.child:ping", {}, limits).ok
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        result = run_sandboxed("trace_bench.sandbox.child:ping", {}, limits)
        times.append(time.perf_counter() - start)
        assert result.ok, result
    times.sort()
    return statistics.median(times), times[int(0.99 * (len(times) - 1))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--calls", type=int, default=200)
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; "
          f"tree {Path(trace_bench.__file__).resolve().parents[1]}")
    for processes, label in ((0, "no process budget"), (2, "max_processes=2")):
        median_s, p99_s = overhead(args.calls, processes)
        report(f"overhead per call, {label}, median", median_s * 1000, "ms", "< 30 ms" if not processes else "")
        report(f"overhead per call, {label}, p99", p99_s * 1000, "ms", "< 100 ms" if not processes else "")


if __name__ == "__main__":
    main()

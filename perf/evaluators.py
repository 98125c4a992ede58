"""Sandbox overhead per call and LLM4AD evaluator wall time (template and each stub candidate).

Overhead = median wall time of ``run_sandboxed`` on a target that returns at once, after the
zygote is warm; the first call, which starts the zygote, is reported separately.  Evaluator
times are sandboxed guide evaluations with the task defaults (the guide's cache is bypassed).
"""

from __future__ import annotations

import importlib
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _util import report  # noqa: E402

from trace_bench.sandbox import SandboxLimits, capabilities, run_sandboxed  # noqa: E402
from trace_bench.tasks.llm4ad import task_names  # noqa: E402

ECHO = "trace_bench.sandbox.child:ping"  # returns its payload at once


def sandbox_overhead(calls: int = 100) -> tuple[float, float, float]:
    start = time.perf_counter()
    first = run_sandboxed(ECHO, {})
    first_s = time.perf_counter() - start
    assert first.ok, first
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        result = run_sandboxed(ECHO, {}, SandboxLimits(wall_s=5))
        times.append(time.perf_counter() - start)
        assert result.ok, result
    return first_s, statistics.median(times), max(times)


def evaluator_times(name: str) -> tuple[list[str], list[float], list[float]]:
    problem = importlib.import_module(f"trace_bench.tasks.llm4ad.{name}").build_trace_problem()
    guide, data = problem["guide"], problem["train_dataset"]
    labels, seconds, scores = [], [], []
    programs = [("template", problem["param"].data)]
    programs += [(f"stub{i}", program) for i, program in enumerate(problem["stub_candidates"])]
    for label, program in programs:
        guide.clear_cache()  # time a real evaluation, not a cache hit
        start = time.perf_counter()
        value, _ = guide.get_feedback(data["inputs"][0], program, data["infos"][0])
        seconds.append(time.perf_counter() - start)
        labels.append(label)
        scores.append(value)
    return labels, seconds, scores


def main() -> None:
    first_s, median_s, worst_s = sandbox_overhead()
    print(f"sandbox capabilities: {capabilities()}")
    report("sandbox: first call (starts the zygote)", first_s * 1000, "ms")
    report("sandbox: overhead per call, median of 100", median_s * 1000, "ms", "< 30 ms")
    report("sandbox: overhead per call, worst of 100", worst_s * 1000, "ms")
    print()
    print(f"{'task':<24} {'program':<9} {'wall s':>8} {'score':>14}")
    for name in task_names():
        labels, seconds, scores = evaluator_times(name)
        for label, wall, value in zip(labels, seconds, scores, strict=True):
            print(f"{name:<24} {label:<9} {wall:8.3f} {value:14.6g}")


if __name__ == "__main__":
    main()

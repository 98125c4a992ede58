"""Sandbox overhead per call and LLM4AD evaluator wall time (template and each stub candidate).

Overhead = wall time of ``run_sandboxed`` on a target that returns at once, after the sandbox
is warm (median and 99th percentile of 200 calls back to back, and the median of 100 calls 20 ms
apart, roughly a trainer's pace, which lets the sandbox prepare the next call in between), in the
bubblewrap mode and, for comparison, the weak mode; the first call, which starts the sandbox, is
reported separately, and so is the CPU time the sandbox's processes spend per call (on a shared
machine wall times move with the load; CPU time much less).  Evaluator
times are guide evaluations with the task defaults (the guide's cache is bypassed): the
candidate runs sandboxed, the trusted half replays and scores in this process.  The load
average is printed first: on a shared machine every figure moves with it.
"""

from __future__ import annotations

import importlib
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _util import report  # noqa: E402

from trace_bench.sandbox import SETTING_ENV, SandboxLimits, capabilities, run_sandboxed, shutdown  # noqa: E402
from trace_bench.tasks.llm4ad import task_names  # noqa: E402

ECHO = "trace_bench.sandbox.child:ping"  # returns its payload at once


def sandbox_overhead(calls: int = 200) -> tuple[float, float, float, float]:
    """(first call, median, 99th percentile, worst) in seconds, calls back to back."""
    start = time.perf_counter()
    first = run_sandboxed(ECHO, {})
    first_s = time.perf_counter() - start
    assert first.ok, first
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        result = run_sandboxed(ECHO, {}, SandboxLimits(wall_s=30))
        times.append(time.perf_counter() - start)
        assert result.ok, result
    times.sort()
    return first_s, statistics.median(times), times[int(0.99 * (len(times) - 1))], times[-1]


def paced_overhead(calls: int = 100, pause_s: float = 0.02) -> float:
    times = []
    for _ in range(calls):
        time.sleep(pause_s)
        start = time.perf_counter()
        assert run_sandboxed(ECHO, {}, SandboxLimits(wall_s=30)).ok
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _zygote_cpu_s() -> float:
    """CPU seconds of this process's zygote and every call it reaped (its children's times included)."""
    total, tick = 0.0, os.sysconf("SC_CLK_TCK")
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            command = Path(f"/proc/{pid}/cmdline").read_bytes()
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            parent = Path(f"/proc/{fields[1]}/cmdline").read_bytes()
        except (OSError, IndexError):
            continue
        python = sys.executable.encode()
        is_zygote = b"sandbox.zygote import main" in command and command.startswith(python)
        if is_zygote and not (b"sandbox.zygote import main" in parent and parent.startswith(python)):
            total += sum(int(x) for x in fields[11:15]) / tick  # the zygote itself, not one of its forks
    return total


def sandbox_cpu_per_call(calls: int = 200) -> float:
    before = _zygote_cpu_s()
    for _ in range(calls):
        assert run_sandboxed(ECHO, {}, SandboxLimits(wall_s=30)).ok
    time.sleep(0.5)  # let the zygote reap the last supervisors
    return (_zygote_cpu_s() - before) / calls


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


def humaneval_check_time(problems: int = 20) -> float | None:
    """Median seconds per HumanEval check (candidate and checker in two sandboxed processes)."""
    try:
        from trace_bench.tasks.humaneval.data import load_problems
        from trace_bench.tasks.humaneval.guide import UnitTestGuide
    except ImportError:
        return None
    guide, times = UnitTestGuide(timeout_s=30), []
    for problem in load_problems()[:problems]:
        start = time.perf_counter()
        assert guide.check(problem.reference_code, problem.info())[0] == 1.0
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores")
    for mode, setting in (("bwrap", "strong"), ("weak", "force-weak")):
        os.environ[SETTING_ENV] = setting
        shutdown()
        first_s, median_s, p99_s, worst_s = sandbox_overhead()
        print(f"sandbox ({mode}): {capabilities()}")
        report(f"sandbox ({mode}): first call (starts the sandbox)", first_s * 1000, "ms")
        report(f"sandbox ({mode}): overhead per call, median of 200", median_s * 1000, "ms",
               "< 30 ms" if mode == "bwrap" else "")
        report(f"sandbox ({mode}): overhead per call, p99 of 200", p99_s * 1000, "ms",
               "< 100 ms" if mode == "bwrap" else "")
        report(f"sandbox ({mode}): overhead per call, worst of 200", worst_s * 1000, "ms")
        report(f"sandbox ({mode}): overhead per call, median of 100, 20 ms apart", paced_overhead() * 1000, "ms")
        report(f"sandbox ({mode}): CPU of the sandbox per call, 200 calls", sandbox_cpu_per_call() * 1000, "ms")
    os.environ[SETTING_ENV] = "strong"
    shutdown()
    check_s = humaneval_check_time()
    if check_s is not None:
        report("humaneval: one check (canonical solution), median of 20", check_s * 1000, "ms")
    print()
    print(f"{'task':<24} {'program':<9} {'wall s':>8} {'score':>14}")
    for name in task_names():
        labels, seconds, scores = evaluator_times(name)
        for label, wall, value in zip(labels, seconds, scores, strict=True):
            print(f"{name:<24} {label:<9} {wall:8.3f} {value:14.6g}")


if __name__ == "__main__":
    main()

"""The discovery suite's targets: list-tasks time with the suite, the sandbox's overhead per evaluation
of a discovery task (beyond the evaluator's own time), and the wall time of a stub run of
configs/discovery_arena.yaml.

Overhead: the same program scored twice, once by calling the problem's ``run`` and ``score`` in this
process (the evaluator's own time) and once through the task's guide (a fresh sandboxed call per
evaluation, its cache cleared); the median of the differences is the sandbox's share.
``--no-arena`` skips the arena run.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time

from _util import BIN, REPO, python, report, time_command


def evaluation_overhead(task: str, repeat: int = 25) -> tuple[float, float]:
    """(median evaluator-only seconds, median sandbox overhead seconds) for ``task``'s initial program."""
    from trace_bench.registry.tasks import TaskCatalog
    from trace_bench.tasks.discovery.problems.common import load_program
    from trace_bench.tasks.problem import Problem

    problem = Problem.from_mapping(TaskCatalog.create().build(task, {}), task)
    guide, discovery = problem.guide, problem.guide.task
    program = discovery.program.render(problem.param.data)
    module = __import__(discovery.evaluator_module, fromlist=["run"])
    with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as handle:
        handle.write(program)
    guide.evaluate(problem.param.data)  # start the sandbox once, as a job does on its first evaluation
    direct, sandboxed = [], []
    for _ in range(repeat):
        start = time.perf_counter()
        load_program(handle.name)
        module.score(module.run(handle.name, **discovery.settings), **discovery.settings)
        direct.append(time.perf_counter() - start)
        guide._init_cache()
        start = time.perf_counter()
        assert guide.evaluate(problem.param.data).ok
        sandboxed.append(time.perf_counter() - start)
    os.unlink(handle.name)
    return statistics.median(direct), statistics.median(s - d for s, d in zip(sandboxed, direct, strict=True))


def ping_call(repeat: int = 25) -> float:
    """Median seconds of a sandboxed call of a no-op target: the sandbox's own floor, for comparison."""
    from trace_bench.sandbox import SandboxLimits, run_sandboxed

    limits = SandboxLimits(wall_s=10, memory_mb=2048, file_size_mb=64)
    run_sandboxed("trace_bench.sandbox.child:ping", {}, limits)
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run_sandboxed("trace_bench.sandbox.child:ping", {}, limits)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> None:
    print("load:", os.getloadavg())
    cli = str(BIN / "trace-bench")
    base = time_command([python(), "-c", "pass"], repeat=7)
    report("python -c pass", base, "s")
    report("trace-bench list-tasks (all default suites)", time_command([cli, "list-tasks"], repeat=7), "s", "< 0.5 s")
    report("trace-bench list-tasks --bench discovery", time_command([cli, "list-tasks", "--bench", "discovery"],
                                                                    repeat=7), "s", "< 0.5 s")
    report("sandboxed call of a no-op target (median, for comparison)", ping_call() * 1000, "ms")
    for task in ("discovery:circle_packing_26", "discovery:kissing_11", "discovery:erdos_min_overlap"):
        own, overhead = evaluation_overhead(task)
        report(f"{task}: evaluator's own time (median)", own * 1000, "ms")
        report(f"{task}: sandbox overhead (median)", overhead * 1000, "ms", "< 30 ms")
    if "--no-arena" not in sys.argv:
        with tempfile.TemporaryDirectory() as runs:
            start = time.perf_counter()
            done = subprocess.run([cli, "run", "--config", str(REPO / "configs" / "discovery_arena.yaml"),
                                   "--runs-dir", runs], capture_output=True, text=True, cwd=REPO)
            wall = time.perf_counter() - start
        report(f"stub run of configs/discovery_arena.yaml (exit {done.returncode})", wall, "s", "< 60 s")
    print("load:", os.getloadavg())


if __name__ == "__main__":
    main()

"""Cost of running trainable code nodes in the sandbox (issue 25).

Prints, with the load average first (on a shared machine every wall figure moves with it):

- the stub run of ``internal:code_param`` (one job, PrioritySearch, 4 steps): wall time of the
  whole ``trace-bench run`` and the job's own ``time_seconds``, median of ``--rounds`` runs;
- the sandbox's overhead per call (a target that returns at once, 200 calls back to back, after
  the sandbox is warm): median and 99th percentile (targets < 30 ms, < 100 ms);
- where the tree has sandboxed code nodes: one call of the trainable function through opto, median
  of 100, with the task's own code (in the job process) and with an optimizer's version (each call
  on a new argument, so each is a sandboxed call and none is answered from the cache).

``--before-only`` skips what an older tree does not have.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.append(str(Path(__file__).resolve().parents[1]))  # a tree on PYTHONPATH wins (before/after runs)

from _util import BIN, report  # noqa: E402

import trace_bench  # noqa: E402

# The tree whose code runs (an older one, on PYTHONPATH, for a before/after): its job processes are
# started from the run's working directory, which comes first on their import path.
TREE = Path(trace_bench.__file__).resolve().parents[1]

CONFIG = """\
mode: stub
seeds: [1]
tasks: [internal:code_param]
trainers:
  - id: PrioritySearch
    params_variants:
      - {ps_steps: 4, ps_batches: 1, ps_candidates: 2, ps_proposals: 2}
"""


def stub_run(tmp: Path, index: int) -> tuple[float, float, str]:
    config = tmp / "code_param.yaml"
    config.write_text(CONFIG, encoding="utf-8")
    runs = tmp / f"runs{index}"
    args = [str(BIN / "trace-bench"), "run", "--config", str(config), "--runs-dir", str(runs), "--quiet"]
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=TREE, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"the stub run failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    (run_dir,) = [d for d in runs.iterdir() if d.is_dir()]
    (result,) = [json.loads(p.read_text()) for p in run_dir.glob("jobs/*/results.json")]
    return wall, float(result["time_seconds"]), str(result.get("score_best"))


def sandbox_overhead(calls: int = 200) -> tuple[float, float]:
    from trace_bench.sandbox import SandboxLimits, run_sandboxed

    assert run_sandboxed("trace_bench.sandbox.child:ping", {}).ok
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        result = run_sandboxed("trace_bench.sandbox.child:ping", {}, SandboxLimits(wall_s=30))
        times.append(time.perf_counter() - start)
        assert result.ok, result
    times.sort()
    return statistics.median(times), times[int(0.99 * (len(times) - 1))]


def code_node_calls(calls: int = 100) -> tuple[float, float]:
    """Median seconds of one forward call of internal:code_param's trainable function: the task's own
    code (in the job process), then an optimizer's version (each call a new argument: a sandboxed call)."""
    from trace_bench.runner.job.body import prepare_process
    from trace_bench.tasks.internal.code_param import build_trace_problem
    from trace_bench.tasks.problem import Problem

    prepare_process()
    agent = Problem.from_mapping(build_trace_problem(), "internal:code_param").param
    medians = []
    for code in (None, "def transform(self, x):\n    return 2 * x + 1\n"):
        if code is not None:
            agent.transform.parameter._set(code)
        agent(-1)  # the first call starts what it needs
        times = []
        for x in range(calls):
            start = time.perf_counter()
            agent(x)
            times.append(time.perf_counter() - start)
        medians.append(statistics.median(times))
    return medians[0], medians[1]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--before-only", action="store_true", help="skip the figures an older tree lacks")
    args = parser.parse_args()
    print(f"load average: {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores; tree {TREE}")
    with tempfile.TemporaryDirectory() as tmp:
        runs = [stub_run(Path(tmp), i) for i in range(args.rounds)]
    report(f"code_param stub run: wall, median of {args.rounds}", statistics.median(r[0] for r in runs), "s")
    report(f"code_param stub run: job time, median of {args.rounds}", statistics.median(r[1] for r in runs), "s")
    print(f"  (walls: {', '.join(f'{r[0]:.2f}' for r in runs)}; best scores: {sorted({r[2] for r in runs})})")
    median_s, p99_s = sandbox_overhead()
    report("sandbox overhead per call, median of 200", median_s * 1000, "ms", "< 30 ms")
    report("sandbox overhead per call, p99 of 200", p99_s * 1000, "ms", "< 100 ms")
    if not args.before_only:
        own, rewritten = code_node_calls()
        report("code node: the task's own function, one call, median", own * 1000, "ms")
        report("code node: an optimizer's version, one sandboxed call, median", rewritten * 1000, "ms")


if __name__ == "__main__":
    main()

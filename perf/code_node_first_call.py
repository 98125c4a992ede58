"""The first call of optimizer-written code in a job: with the sandbox started up front in the
background (``sandbox.prepare``: every job before issue 43, a real job now) and started by that call
(``prepare_lazily``: a stub job now).

Each round builds ``internal:code_param``'s problem in a fresh process, as a job does, then sets an
optimizer's version of its trainable function and times its first call, and then a second one (on
a new argument, so it is a sandboxed call too).  ``eager`` starts the sandbox when the problem is
built and waits ``--gap`` seconds first (the job's other work before its first rewrite, e.g. the
first LLM call), so that call finds it warm if the start fits in the gap; ``lazy`` is what a stub job
does now.  Prints the medians and the load average: on a shared machine compare the two sides of
one invocation only.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys

from _util import REPO, python

PROBE = """
import sys, time
import trace_bench.sandbox as sandbox
from trace_bench.tasks.internal.code_param import build_trace_problem
from trace_bench.tasks.problem import Problem

if sys.argv[1] == "eager":  # what check_problem did: the start in a background thread at once
    sandbox.prepare_lazily = sandbox.prepare
problem = Problem.from_mapping(build_trace_problem(), "internal:code_param")
agent = problem.param
agent(5)
time.sleep(float(sys.argv[2]))
agent.transform.parameter._set("def transform(self, x):\\n    return 2 * x + 1\\n")
times = []
for x in (6, 7):
    start = time.perf_counter()
    assert agent(x).data == 2 * x + 1
    times.append(time.perf_counter() - start)
print(*times)
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--gap", type=float, default=0.5, help="seconds between the problem's build and the first "
                                                               "rewritten call (default 0.5)")
    args = parser.parse_args()
    print(f"load average before: {os.getloadavg()}")
    samples: dict[str, list[tuple[float, float]]] = {"eager": [], "lazy": []}
    for index in range(args.rounds):
        for side in (["eager", "lazy"] if index % 2 == 0 else ["lazy", "eager"]):
            out = subprocess.run([python(), "-c", PROBE, side, str(args.gap)], cwd=REPO, capture_output=True,
                                 text=True, check=True).stdout.split()
            samples[side].append((float(out[0]), float(out[1])))
    print(f"load average after: {os.getloadavg()}")
    for side, values in samples.items():
        print(f"{side}: first rewritten call median {1000 * statistics.median(v[0] for v in values):.0f} ms "
              f"(max {1000 * max(v[0] for v in values):.0f}), second {1000 * statistics.median(v[1] for v in values):.0f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())

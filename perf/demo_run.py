"""``make demo``'s run (``configs/demo.yaml``: 24 stub jobs, 2 workers): wall time and the CPU of
every process, the median of ``--rounds`` runs (target: under 10 s on 2 cores).

``TRACE_BENCH_BEFORE`` may name a checkout of an earlier commit of this project: its runs then
alternate with this checkout's (put first on ``PYTHONPATH``, this project's ``.venv``), so
before/after figures come from one machine state.  Prints the load average: on a shared machine,
compare sides of one invocation only.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import sys
import tempfile
from pathlib import Path

from _util import BIN, REPO
from smoke_vs_original import PR_SET_CHILD_SUBREAPER, timed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3, help="runs per side (default 3)")
    args = parser.parse_args()
    if not sys.platform.startswith("linux") or ctypes.CDLL(None, use_errno=True).prctl(
            PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("skipped: needs Linux (prctl PR_SET_CHILD_SUBREAPER) to count the CPU of every process")
        return 0
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    before = os.environ.get("TRACE_BENCH_BEFORE")
    envs = {"this checkout": env, **({"before": {**env, "PYTHONPATH": before}} if before else {})}
    python = BIN / "python" if (BIN / "python").exists() else Path(sys.executable)
    print(f"load average before: {os.getloadavg()}")
    samples: dict[str, list[tuple[float, float]]] = {side: [] for side in envs}
    with tempfile.TemporaryDirectory() as tmp:
        for index in range(args.rounds):
            sides = list(envs) if index % 2 == 0 else list(reversed(envs))
            for side in sides:
                command = [str(python), "-m", "trace_bench", "run", "--config", str(REPO / "configs" / "demo.yaml"),
                           "--runs-dir", str(Path(tmp) / f"{len(samples[side])}-{side}"), "--max-workers", "2",
                           "--quiet"]
                wall, cpu, code = timed(command, Path(tmp), envs[side])
                if code != 0:
                    return 1
                samples[side].append((wall, cpu))
                print(f"{side:<14} wall {wall:6.2f} s   cpu {cpu:6.2f} s   load {os.getloadavg()[0]:.1f}")
    print(f"load average after: {os.getloadavg()}")
    for side, values in samples.items():
        print(f"{side}: median wall {statistics.median(w for w, _ in values):.2f} s (target < 10 s), median CPU "
              f"{statistics.median(c for _, c in values):.2f} core-s")
    return 0


if __name__ == "__main__":
    os.chdir(REPO)
    sys.exit(main())

"""CPU cost of a whole stub run: the driver, its job template and the jobs, in core-seconds.

Wall time hides it on an idle machine (the template starts beside the driver), but the test suite's
~250 runs, and every user on a loaded machine, pay it.  The job template and the jobs outlive no
one but are not the driver's children to wait for (the forkserver is left to exit on its own), so
this script makes itself the child subreaper (Linux): every descendant that exits is reaped here
and its CPU counted.  Prints the median of 5 runs of ``configs/smoke.yaml`` (1 job) and of a
10-job matrix, and what the 9 extra jobs cost each.
"""

from __future__ import annotations

import ctypes
import os
import resource
import statistics
import sys
import tempfile
from pathlib import Path

from _util import REPO, report
from run_overhead import run

PR_SET_CHILD_SUBREAPER = 36
TEN_JOBS = """run_id: ten
tasks: [internal:numeric_param]
trainers: [{id: MinibatchAlgorithm, num_steps: 2}]
seeds: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]
max_workers: 1
"""


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_cpu(config: Path, runs: Path) -> tuple[float, float]:
    """(core-seconds of every process of the run, wall seconds)."""
    before = _children_cpu()
    wall, _ = run(config, runs)
    while True:  # the template and its jobs, re-parented to this process when the driver exited
        try:
            os.wait()
        except ChildProcessError:
            break
    return _children_cpu() - before, wall


def median_run(config: Path, tmp: Path, repeat: int = 5) -> tuple[float, float]:
    samples = [run_cpu(config, tmp / f"runs{i}") for i in range(repeat)]
    return statistics.median(s[0] for s in samples), statistics.median(s[1] for s in samples)


def main() -> None:
    if not sys.platform.startswith("linux"):
        sys.exit("run_cpu.py needs Linux (prctl PR_SET_CHILD_SUBREAPER)")
    if ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        sys.exit("prctl(PR_SET_CHILD_SUBREAPER) failed")
    print(f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r}")
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        run_cpu(REPO / "configs" / "smoke.yaml", tmp_path / "warm-up")
        one_cpu, one_wall = median_run(REPO / "configs" / "smoke.yaml", tmp_path)
        report("stub run, 1 job (smoke.yaml): CPU, all processes", one_cpu, "core-s")
        report("  wall", one_wall, "s")
        ten = tmp_path / "ten.yaml"
        ten.write_text(TEN_JOBS, encoding="utf-8")
        ten_cpu, ten_wall = median_run(ten, tmp_path)
        report("stub run, 10 jobs (MinibatchAlgorithm): CPU", ten_cpu, "core-s")
        report("  wall", ten_wall, "s")
        report("  CPU per extra job", (ten_cpu - one_cpu) / 9, "core-s")


if __name__ == "__main__":
    main()

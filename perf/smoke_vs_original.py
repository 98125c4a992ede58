"""The stub smoke run, ours against the original Trace-Bench's, side by side (DESIGN §11: >= 8x).

Both harnesses run the original's ``configs/smoke.yaml`` (one PrioritySearch job on
``internal:numeric_param``, ``ps_steps: 1``, ``ps_batches: 1``, stub mode; our ``configs/smoke.yaml``
is the same run), alternating ours and theirs for ``--rounds`` rounds from a neutral working
directory, each into a fresh runs directory.  It prints every pair, the medians of the wall time and
of the CPU time of all processes of a run (the job template and jobs included: this process is the
child subreaper), the ratios, and the load average before and after: the machine may be shared, so
compare the two sides of one invocation, never figures of different invocations.

Where the original is: ``TRACE_BENCH_ORIGINAL`` names a checkout of AgentOpt/Trace-Bench (its
``configs/smoke.yaml`` is read from there) and ``TRACE_BENCH_ORIGINAL_PYTHON`` the Python of an
environment it is installed in (default: ``$TRACE_BENCH_ORIGINAL/.venv/bin/python``).  Without
them the script says so and exits 0.  Preparing one (the original needs OpenTrace's
``experimental`` branch, whose ``opto.trainer`` the PyPI ``trace-opt`` lacks)::

    git clone https://github.com/AgentOpt/Trace-Bench /tmp/orig-tb
    git clone -b experimental https://github.com/AgentOpt/OpenTrace /tmp/opentrace
    python3 -m venv /tmp/orig-tb/.venv
    /tmp/orig-tb/.venv/bin/pip install /tmp/opentrace -e /tmp/orig-tb
    TRACE_BENCH_ORIGINAL=/tmp/orig-tb .venv/bin/python perf/smoke_vs_original.py --rounds 7

``TRACE_BENCH_BEFORE`` may name another checkout of this project (an earlier commit, e.g. made with
``git worktree add /tmp/before <commit>``): it then runs as a third side, ``before``, with that
checkout first on ``PYTHONPATH`` and this project's ``.venv``, so before/after figures come from one
invocation on one machine state.

Both environments should hold byte-compiled packages (pip and ``make install`` leave them so);
``PYTHONDONTWRITEBYTECODE`` is reported, since a project compiled from source in every process is
slower to start.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _util import BIN, REPO

PR_SET_CHILD_SUBREAPER = 36


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def timed(command: list[str], cwd: Path, env: dict[str, str]) -> tuple[float, float, int]:
    """(wall seconds, CPU seconds of every process it started, exit code) of one run."""
    before = _children_cpu()
    start = time.perf_counter()
    proc = subprocess.run(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                          text=True, check=False)
    wall = time.perf_counter() - start
    while True:  # a template or job left behind, re-parented here: its CPU counts too
        try:
            os.wait()
        except ChildProcessError:
            break
    if proc.returncode != 0:
        print(f"  exit {proc.returncode}: {' '.join(command)}\n{proc.stderr[-2000:]}", file=sys.stderr)
    return wall, _children_cpu() - before, proc.returncode


def _ok_rows(runs: Path) -> bool:
    """Whether the run wrote a results.csv whose one row ended ok (a failed job is no smoke run)."""
    import csv

    rows = [row for path in runs.glob("*/results.csv") for row in csv.DictReader(path.open(encoding="utf-8"))]
    return len(rows) == 1 and rows[0].get("status") == "ok"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7, help="alternating pairs of runs (default 7)")
    args = parser.parse_args()
    checkout = os.environ.get("TRACE_BENCH_ORIGINAL")
    if not checkout or not (Path(checkout) / "configs" / "smoke.yaml").is_file():
        print("skipped: set TRACE_BENCH_ORIGINAL to a checkout of the original Trace-Bench (and "
              "TRACE_BENCH_ORIGINAL_PYTHON to the Python it is installed in); see this script's docstring")
        return 0
    original_python = os.environ.get("TRACE_BENCH_ORIGINAL_PYTHON") or str(Path(checkout) / ".venv" / "bin" / "python")
    if not Path(original_python).is_file():
        print(f"skipped: {original_python} does not exist (set TRACE_BENCH_ORIGINAL_PYTHON)")
        return 0
    if not sys.platform.startswith("linux") or ctypes.CDLL(None, use_errno=True).prctl(
            PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        print("skipped: needs Linux (prctl PR_SET_CHILD_SUBREAPER) to count the CPU of every process")
        return 0
    config = Path(checkout) / "configs" / "smoke.yaml"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "TRACE_")) and k != "PYTHONPATH"}
    ours_python = BIN / "python" if (BIN / "python").exists() else Path(sys.executable)
    before = os.environ.get("TRACE_BENCH_BEFORE")
    envs = {"ours": env, "original": env, "before": {**env, "PYTHONPATH": before or ""}}
    print(f"load average before: {os.getloadavg()}; PYTHONDONTWRITEBYTECODE={env.get('PYTHONDONTWRITEBYTECODE', '')!r}")
    print(f"config: {config}\noriginal: {original_python} -m trace_bench.cli\nours: {ours_python} -m trace_bench")
    order = ["ours", "original", *(["before"] if before else [])]
    sides: dict[str, list[tuple[float, float]]] = {side: [] for side in order}
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        commands = {
            "ours": [str(ours_python), "-m", "trace_bench", "run", "--config", str(config), "--quiet"],
            "original": [original_python, "-c", "import sys; from trace_bench.cli import main; sys.exit(main())",
                         "run", "--config", str(config)],
        }
        commands["before"] = commands["ours"]
        for round_index in range(args.rounds + 1):  # round 0 warms the page cache, not counted
            shift = round_index % len(order)
            for side in order[shift:] + order[:shift]:
                runs = work / f"{side}-{round_index}"
                wall, cpu, code = timed([*commands[side], "--runs-dir", str(runs)], work, envs[side])
                if code != 0 or not _ok_rows(runs):
                    print(f"{side} run {round_index} did not end with one ok job: not a smoke run")
                    return 1
                if round_index:
                    sides[side].append((wall, cpu))
                    print(f"round {round_index}: {side:<8} wall {wall:6.3f} s   cpu {cpu:6.3f} s")
    print(f"load average after: {os.getloadavg()}")
    theirs_wall = statistics.median(w for w, _ in sides["original"])
    theirs_cpu = statistics.median(c for _, c in sides["original"])
    for side in order:
        if side == "original":
            continue
        wall = statistics.median(w for w, _ in sides[side])
        cpu = statistics.median(c for _, c in sides[side])
        print(f"median wall: {side} {wall:.3f} s, original {theirs_wall:.3f} s -> {theirs_wall / wall:.1f}x "
              "(target >= 8x)")
        print(f"median CPU, all processes: {side} {cpu:.3f} s, original {theirs_cpu:.3f} s -> "
              f"{theirs_cpu / cpu:.1f}x")
        pairs = [t[0] / o[0] for o, t in zip(sides[side], sides["original"], strict=True)]
        print(f"per-round wall ratios ({side}): {', '.join(f'{p:.1f}' for p in pairs)}")
    return 0


if __name__ == "__main__":
    os.chdir(REPO)
    sys.exit(main())

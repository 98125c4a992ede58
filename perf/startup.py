"""CLI start-up: --help, list-tasks and list-trainers, as wall time (median) and CPU time (median
user + sys of the process, steadier than wall time on a shared machine), their ratio to
`python -c pass`, and list-trainers' ratio to list-tasks (target: as fast as list-tasks)."""

from __future__ import annotations

import resource
import statistics
import subprocess

from _util import BIN, REPO, python, report, time_command


def cpu_command(args: list[str], repeat: int = 7) -> float:
    """Median CPU seconds (user + sys) of ``args`` over ``repeat`` runs, after one warm-up run."""
    subprocess.run(args, cwd=REPO, capture_output=True, check=False)
    times = []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        subprocess.run(args, cwd=REPO, capture_output=True, check=False)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return statistics.median(times)


def main() -> None:
    base = time_command([python(), "-c", "pass"], repeat=9)
    cli = str(BIN / "trace-bench")
    report("python -c pass", base, "s")
    wall: dict[str, float] = {}
    cpu: dict[str, float] = {}
    for key, label, args, target in (
        ("help", "trace-bench --help", [cli, "--help"], "< 0.15 s"),
        ("tasks", "trace-bench list-tasks (all default suites)", [cli, "list-tasks"], "< 0.25 s (issue: < 0.5 s)"),
        ("trainers", "trace-bench list-trainers --all", [cli, "list-trainers", "--all"], "< 0.17 s"),
    ):
        wall[key] = time_command(args, repeat=7)
        cpu[key] = cpu_command(args)
        report(label, wall[key], "s", target)
        report("  CPU time (user + sys)", cpu[key], "s")
        report("  ratio to python -c pass", wall[key] / base, "x")
    report("list-trainers --all / list-tasks, wall", wall["trainers"] / wall["tasks"], "x", "<= 1")
    report("list-trainers --all / list-tasks, CPU", cpu["trainers"] / cpu["tasks"], "x", "<= 1")


if __name__ == "__main__":
    main()

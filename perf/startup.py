"""CLI start-up: --help and list-tasks wall time, and their ratio to `python -c pass`."""

from __future__ import annotations

from _util import BIN, python, report, time_command


def main() -> None:
    base = time_command([python(), "-c", "pass"], repeat=9)
    cli = str(BIN / "trace-bench")
    report("python -c pass", base, "s")
    for label, args, target in (
        ("trace-bench --help", [cli, "--help"], "< 0.15 s"),
        ("trace-bench list-tasks (all default suites)", [cli, "list-tasks"], "< 0.25 s (issue: < 0.5 s)"),
        ("trace-bench list-trainers --all", [cli, "list-trainers", "--all"], ""),
    ):
        seconds = time_command(args, repeat=7)
        report(label, seconds, "s", target)
        report("  ratio to python -c pass", seconds / base, "x")


if __name__ == "__main__":
    main()

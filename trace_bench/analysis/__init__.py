"""Analysis of finished runs: frames, statistics over seeds, curves, report and compare.

Needs the ``analysis`` extra (pandas, scipy); nothing outside this package imports it at module level.
"""

from __future__ import annotations

import json
import sys

from trace_bench.analysis.compare import CompareError, CompareResult, compare_runs, format_compare
from trace_bench.analysis.load import RunDirError, RunSet, load_runs
from trace_bench.analysis.report import build_report, write_report
from trace_bench.analysis.stats import leaderboard, paired_test, per_arm, win_matrix

__all__ = [
    "CompareError", "CompareResult", "RunDirError", "RunSet", "build_report", "compare_main", "compare_runs",
    "format_compare", "leaderboard", "load_runs", "paired_test", "per_arm", "report_main", "win_matrix",
    "write_report",
]


def report_main(run_paths: list[str], out: str | None = None) -> int:
    try:
        path = write_report(run_paths, out)
    except RunDirError as exc:
        print(f"trace-bench: error: {exc}", file=sys.stderr)
        return 2
    print(f"report written: {path}")
    return 0


def compare_main(run_a: str, run_b: str, fmt: str = "table") -> int:
    try:
        result = compare_runs(run_a, run_b)
    except (RunDirError, CompareError) as exc:
        print(f"trace-bench: error: {exc}", file=sys.stderr)
        return 2
    if fmt == "json":
        print(json.dumps({"run_a": result.run_a, "run_b": result.run_b, "differing_axes": result.differing_axes,
                          "rows": result.rows}, indent=2, default=str))
    else:
        print(format_compare(result))
    return 0

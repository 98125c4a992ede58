"""Analysis of finished runs: frames, statistics over seeds, the verdict (per task and across tasks),
anytime curves, report.html, compare.

Needs the ``analysis`` extra (pandas, scipy, matplotlib; rliable, autorank and baycomp for the verdict
across tasks, imported only there); nothing outside this package imports it at module level, so the
CLI and the runner stay fast and work without the extra.
"""

from __future__ import annotations

from trace_bench.analysis.compare import (
    CompareError,
    CompareResult,
    compare_arms,
    compare_main,
    compare_runs,
    format_compare,
)
from trace_bench.analysis.curves import (
    AXES,
    area_under_curve,
    arm_curves,
    best_so_far,
    generalization_gap,
    job_auc,
    score_at,
)
from trace_bench.analysis.load import RunDirError, RunSet, load_runs
from trace_bench.analysis.pairs import PairedTest, holm, paired_test, pairwise_tests, win_matrix
from trace_bench.analysis.report import build_report, report_main, write_report
from trace_bench.analysis.stats import Interval, arm_stats, bootstrap_ci, leaderboard, mean_ci

__all__ = [
    "AXES", "CompareError", "CompareResult", "Interval", "PairedTest", "RunDirError", "RunSet",
    "area_under_curve", "arm_curves", "arm_stats", "best_so_far", "bootstrap_ci", "build_report", "compare_arms", "compare_main",
    "compare_runs", "format_compare", "generalization_gap", "holm", "job_auc", "leaderboard", "load_runs",
    "mean_ci", "paired_test", "pairwise_tests", "report_main", "score_at", "win_matrix", "write_report",
]

#!/usr/bin/env bash
# The offline demo (`make demo`): a small comparison matrix in stub mode, then its leaderboard with
# 95% intervals, the paper-style table with each task's cost-quality frontier under it, and a
# self-contained report.html.  Usage: scripts/demo.sh [RUNS_DIR]
set -euo pipefail
runs="${1:-runs}"
trace-bench run --config configs/demo.yaml --runs-dir "$runs" --max-workers "$(nproc)" --quiet
run="$(ls -td "$runs"/*/ | head -n 1)"
run="${run%/}"
echo
# the table reports the metric the leaderboard above ranks on (the table's own default is the last iterate)
trace-bench table "$run" --metric test_best --frontier
echo
trace-bench report "$run"
echo "Next: trace-bench ui --runs-dir $runs   (browse, compare and launch runs)"

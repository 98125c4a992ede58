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
if [ "$runs" = runs ]; then ui="make ui"; else ui="make ui RUNS=$runs"; fi
echo "Next: $ui   (installs the UI extra, then serves these runs on 127.0.0.1: browse, compare, launch)"

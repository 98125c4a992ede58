#!/usr/bin/env bash
# The offline demo (`make demo`): a small comparison matrix in stub mode, then its leaderboard with
# 95% intervals and the verdict's ranks (ties as ties), the paper-style table with each task's
# cost-quality frontier under it, and a self-contained report.html (with the verdict across tasks).
# Usage: scripts/demo.sh [RUNS_DIR]
set -euo pipefail
runs="${1:-runs}"
trace-bench run --config configs/demo.yaml --runs-dir "$runs" --max-workers "$(nproc)" --quiet
run="$(ls -td "$runs"/*/ | head -n 1)"
run="${run%/}"
echo
# the table reports the metric the leaderboard above ranks on, with the same ranks
trace-bench table "$run" --frontier
echo
trace-bench report "$run"
if [ "$runs" = runs ]; then ui="make ui"; else ui="make ui RUNS=$runs"; fi
echo "Next: $ui   (installs the UI extra, then serves these runs on 127.0.0.1: browse, compare, launch)"

"""Run-level figures: stub smoke wall time, per-job overhead on the 200-job matrix, and parallel
efficiency at 2 workers (1-worker wall / (2 x 2-worker wall))."""

from __future__ import annotations

import csv
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _util import BIN, REPO, report


def run(config: Path, runs: Path, workers: int | None = None) -> tuple[float, Path]:
    args = [str(BIN / "trace-bench"), "run", "--config", str(config), "--runs-dir", str(runs), "--quiet"]
    if workers:
        args += ["--max-workers", str(workers)]
    start = time.perf_counter()
    proc = subprocess.run(args, cwd=REPO, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - start
    if proc.returncode not in (0, 1):
        sys.exit(proc.stderr)
    run_dir = max((d for d in runs.iterdir() if d.is_dir()), key=lambda d: d.stat().st_mtime)
    return wall, run_dir


def job_seconds(run_dir: Path) -> float:
    with open(run_dir / "results.csv", encoding="utf-8") as handle:
        return sum(float(r["time_seconds"]) for r in csv.DictReader(handle))


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        tmp_path = Path(tmp)
        smoke = [run(REPO / "configs" / "smoke.yaml", tmp_path / "smoke")[0] for _ in range(3)]
        report("stub smoke run, 1 job (median of 3)", sorted(smoke)[1], "s", "< 2 s")
        matrix = REPO / "configs" / "perf_matrix_200.yaml"
        wall1, dir1 = run(matrix, tmp_path / "m1", workers=1)
        inside = job_seconds(dir1)
        report("200-job matrix, 1 worker: wall", wall1, "s")
        report("  sum of job time (inside job bodies)", inside, "s")
        report("  per-job overhead (wall - job time) / 200", (wall1 - inside) / 200 * 1000, "ms", "< 50 ms")
        wall2, _ = run(matrix, tmp_path / "m2", workers=2)
        report("200-job matrix, 2 workers: wall", wall2, "s")
        report("  parallel efficiency wall1 / (2 x wall2)", 100 * wall1 / (2 * wall2), "%", ">= 90 %")


if __name__ == "__main__":
    main()

"""report.html on a synthetic 1,000-job run (10-row curves each): seconds to load and render."""

from __future__ import annotations

import csv
import json
import random
import tempfile
import time
from pathlib import Path

from _util import report

from trace_bench.analysis import write_report
from trace_bench.store.schemas import CSV_COLUMNS, CURVE_COLUMNS


def build(root: Path, jobs: int = 1000) -> Path:
    rng = random.Random(0)
    run = root / "big"
    (run / "meta").mkdir(parents=True)
    (run / "meta" / "manifest.json").write_text(json.dumps({"run_id": "big", "jobs": []}))
    (run / "meta" / "config.snapshot.yaml").write_text("mode: stub\n")
    with open(run / "results.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        for i in range(jobs):
            job_id = f"job{i:05d}"
            task, trainer, seed = f"task{i % 10}", f"trainer{(i // 10) % 4}", i // 40
            best = rng.random()
            writer.writerow({"run_id": "big", "job_id": job_id, "task": task, "suite": "s", "trainer": trainer,
                             "params_label": "default", "seed": seed, "status": "ok", "score_initial": 0,
                             "score_best": best, "llm_calls": 10, "total_tokens": 1000, "cost_usd": 0.01,
                             "time_seconds": 1})
            curve = run / "jobs" / job_id / "artifacts" / "curve.csv"
            curve.parent.mkdir(parents=True)
            with open(curve, "w", newline="") as out:
                w = csv.writer(out)
                w.writerow(CURVE_COLUMNS)
                for step in range(10):
                    w.writerow([step, step * 0.1, step, step, step * 100, step * 0.001, best * step / 9,
                                best * step / 9])
    return run


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = build(Path(tmp))
        start = time.perf_counter()
        write_report([run])
        report("report.html for 1,000 jobs (load + render)", time.perf_counter() - start, "s", "< 10 s")


if __name__ == "__main__":
    main()

"""report.html on a synthetic 1,000-job run (10-row curves, 9 LLM calls per job): seconds to load
the run (jobs, curves, LLM calls) and to load + render + write the report.  Target: < 10 s in all."""

from __future__ import annotations

import csv
import json
import random
import tempfile
import time
from pathlib import Path

from _util import report

from trace_bench.analysis import load_runs, write_report
from trace_bench.store.models import CSV_COLUMNS, CURVE_COLUMNS

TASKS, TRAINERS, VARIANTS = 10, 4, 2  # 80 arms; 1,000 jobs -> 12 or 13 seeds per arm


def build(root: Path, jobs: int = 1000, steps: int = 9) -> Path:
    rng = random.Random(0)
    run = root / "big"
    (run / "meta").mkdir(parents=True)
    entries, rows = [], []
    for index in range(jobs):
        job_id = f"job{index:05d}"
        task = f"suite:task{index % TASKS}"
        trainer = f"trainer{(index // TASKS) % TRAINERS}"
        label = f"steps={1 + (index // (TASKS * TRAINERS)) % VARIANTS}"
        seed = index // (TASKS * TRAINERS * VARIANTS)
        status = "failed" if index % 97 == 0 else "ok"
        best = rng.random()
        entries.append({"job_id": job_id, "index": index, "task": task, "suite": "suite", "trainer": trainer,
                        "params": {}, "params_label": label, "seed": seed, "eval_kwargs": {}, "resolved": {}})
        rows.append({"run_id": "big", "job_id": job_id, "task": task, "suite": "suite", "trainer": trainer,
                     "params": "{}", "params_label": label, "seed": seed, "mode": "real", "llm_model": "m",
                     "status": status, "error": "boom" if status == "failed" else "", "score_initial": 0,
                     "score_best": best if status == "ok" else "", "n_steps": steps, "llm_calls": steps,
                     "total_tokens": 1000, "cost_usd": 0.01, "time_seconds": 1})
        artifacts = run / "jobs" / job_id / "artifacts"
        artifacts.mkdir(parents=True)
        events = [{"ts": "2026-01-01T00:00:00Z", "type": "job_started"}]
        with open(artifacts / "curve.csv", "w", newline="") as out:
            writer = csv.writer(out)
            writer.writerow(CURVE_COLUMNS)
            for step in range(steps + 1):
                score = best * step / steps
                row = [step, step * 0.1, step + 1, step, step * 100, step * 0.001, score, score]
                writer.writerow(row + [""] * (len(CURVE_COLUMNS) - len(row)))  # a row has every column, measure_* empty
                if step:
                    events.append({"ts": "2026-01-01T00:00:01Z", "type": "llm_call", "role": "optimizer",
                                   "model": "m", "prompt_tokens": 90, "completion_tokens": 10, "cost_usd": 0.001,
                                   "latency_s": 0.5, "cached": False, "retries": 0, "error": None})
                    events.append({"ts": "2026-01-01T00:00:01Z", "type": "step", "step": step, "score": score})
        (run / "jobs" / job_id / "events.jsonl").write_text("".join(json.dumps(e) + "\n" for e in events))
    manifest = {"schema_version": 1, "run_id": "big", "config_hash": "0" * 64, "mode": "real",
                "created_at": "2026-01-01T00:00:00Z", "llm": {"model": "m"}, "jobs": entries}
    (run / "meta" / "manifest.json").write_text(json.dumps(manifest))
    (run / "meta" / "config.snapshot.yaml").write_text("mode: real\n")
    with open(run / "results.csv", "w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=CSV_COLUMNS)
        writer.writeheader()
        writer.writerows(rows)
    return run


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        run = build(Path(tmp))
        start = time.perf_counter()
        runs = load_runs(run)
        calls = len(runs.llm_calls)
        report("load 1,000 jobs (jobs, curves, LLM calls)", time.perf_counter() - start, "s")
        assert len(runs.jobs) == 1000 and len(runs.curves) > 9000 and calls == 9000
        start, cpu = time.perf_counter(), time.process_time()
        out = write_report([run])
        report("report.html for 1,000 jobs (load + render)", time.perf_counter() - start, "s", "< 10 s")
        report("  of which CPU time of this process", time.process_time() - cpu, "s")
        print(f"{'report size':<48} {out.stat().st_size / 1e6:10.3f} MB")


if __name__ == "__main__":
    main()

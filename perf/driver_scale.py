"""A 100,000-job stub matrix at the driver: validate, the resume scan of a finished run, report.

    .venv/bin/python perf/driver_scale.py [--jobs N]

Running 100,000 stub jobs takes hours on 2 cores, so the finished jobs are written here through the
store's own writers (``RunStore``/``JobStore``: a manifest and config snapshot from ``open_run``, then
``job_meta.json`` and an ``ok`` ``results.json`` per job, for the job ids the matrix expands to).
What is measured is the driver's side, the real CLI in a fresh process each time: ``validate``;
a first ``run --resume RUN``, which finds every job complete and writes the manifest entries, tables
and files index a finished run has (the store's writers above leave only the results index); a
second ``run --resume RUN``: the resume scan of a finished run; and ``report``, with each process's
peak RSS. Targets (issue 16): validate < 10 s, resume scan
< 10 s, report < 60 s, driver RSS < 500 MB.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _util import REPO, python, report

from trace_bench.config.loader import load_config
from trace_bench.matrix.expand import expand_matrix
from trace_bench.registry.tasks import TaskCatalog
from trace_bench.runner.options import RunOptions
from trace_bench.runner.run import open_run
from trace_bench.store.models import JobMeta, JobResult

CONFIG = """mode: stub
run_id: scale
seeds: [{seeds}]
tasks: [internal:numeric_param, internal:multi_param]
trainers:
  - id: PrioritySearch
    params_variants: [{{ps_steps: 1, ps_candidates: 1, ps_proposals: 1}}]
  - NoOpTrainer
"""


def timed(args: list[str]) -> tuple[float, float, int]:
    """Wall seconds, peak RSS (MB) and exit code of the CLI run with ``args``."""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    start = time.perf_counter()
    proc = subprocess.Popen([python(), "-m", "trace_bench", *args], cwd=REPO, env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    return time.perf_counter() - start, usage.ru_maxrss / 1024, proc.returncode


def write_finished_run(config_path: Path, runs: Path) -> tuple[Path, int]:
    config = load_config(str(config_path))
    options = RunOptions(runs_dir=str(runs), config_path=str(config_path))
    opened = open_run(config, options)
    try:
        specs = expand_matrix(config, TaskCatalog.create(None))
        for spec in specs:
            job = opened.store.job(spec.job_id)
            job.root.mkdir(parents=True, exist_ok=True)
            job.write_meta(JobMeta.planned(spec, opened.store.run_id))
            opened.store.record_result(job, JobResult(run_id=opened.store.run_id, spec=spec, status="ok",
                                                      score_initial=-3.0, score_best=-1.0, score_final=-1.0,
                                                      time_seconds=0.1))
    finally:
        opened.lock.release()
    return opened.store.root, len(specs)


def main() -> None:
    jobs = int(sys.argv[sys.argv.index("--jobs") + 1]) if "--jobs" in sys.argv else 100_000
    with tempfile.TemporaryDirectory() as tmp:
        config = Path(tmp) / "matrix.yaml"
        config.write_text(CONFIG.format(seeds=", ".join(str(i) for i in range(1, jobs // 4 + 1))))
        wall, rss, code = timed(["validate", "--config", str(config)])
        report(f"validate, {jobs:,} jobs: wall", wall, "s", "< 10 s")
        report("  peak RSS", rss, "MB", "< 500 MB")
        start = time.perf_counter()
        run, written = write_finished_run(config, Path(tmp) / "runs")
        report(f"writing a finished {written:,}-job run through the store", time.perf_counter() - start, "s")
        wall, rss, code = timed(["run", "--resume", str(run), "--quiet"])
        report("first run --resume (writes manifest, tables): wall", wall, "s")
        report("  driver peak RSS", rss, "MB", "< 500 MB")
        print(f"{'  exit code':<48} {code:10d}")
        wall, rss, code = timed(["run", "--resume", str(run), "--quiet"])
        report("run --resume of the finished run: wall", wall, "s", "< 10 s")
        report("  driver peak RSS", rss, "MB", "< 500 MB")
        print(f"{'  exit code':<48} {code:10d}")
        wall, rss, code = timed(["report", str(run), "--out", str(Path(tmp) / "report.html")])
        report("report: wall", wall, "s", "< 60 s")
        report("  peak RSS", rss, "MB")
        print(f"{'  exit code':<48} {code:10d}")


if __name__ == "__main__":
    main()

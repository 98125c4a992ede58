"""Per-job cost of the local executor alone: fork a job from the warm template, run a body that does
nothing, collect its outcome, reap it (the watchdog, the outcome pipe and the process group
included).  100 jobs one after the other, best of 3 batches, so that background load inflates the
figure as little as possible."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Any

from _util import report

PRELOAD = ["job_spawn", "trace_bench.runner.job.template"]  # the template real runs preload (opto, numpy, trainers)


def noop_body(args: dict[str, Any], job: Any) -> dict[str, Any]:
    return {"ok": True}


def batch(executor: Any, root: Path, n: int) -> float:
    from trace_bench.execution.job_process import JobLaunch

    start = time.perf_counter()
    for i in range(n):
        executor.submit(JobLaunch(job_id=f"j{i}", job_dir=str(root / f"j{i}")))
        while executor.running:
            for finished in executor.poll(block_s=1.0):
                assert finished.record == {"ok": True}, finished
    return (time.perf_counter() - start) / n


def main() -> None:
    from job_spawn import noop_body as body  # by module name, so that forked jobs find it

    from trace_bench.execution.local import LocalExecutor, warm_up

    warm_up(PRELOAD)
    executor = LocalExecutor(1, body, preload=PRELOAD)
    with tempfile.TemporaryDirectory() as tmp:
        batch(executor, Path(tmp) / "warm", 5)
        best = min(batch(executor, Path(tmp) / f"b{i}", 100) for i in range(3))
    report("local executor: fork, run a no-op body, reap (best of 3 x 100)", best * 1000, "ms")


if __name__ == "__main__":
    main()

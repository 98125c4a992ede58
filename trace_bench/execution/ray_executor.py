"""The Ray executor: the same job body and wrapper as the local pool, as Ray tasks on a cluster.

Each job is a Ray task with its own resources (``num_cpus``, ``num_gpus``, ``memory``) and runs
in a fresh worker process (``max_calls=1``).  It writes into a temporary directory on its node
and returns every file with its record, so only the driver writes the run directory and no
shared filesystem is needed.  A worker that dies is detected by Ray at once; the job is retried
up to ``max_retries`` times, then recorded as ``failed: worker lost``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from trace_bench.execution.job_process import Finished, JobBody, JobLaunch, run_job_body
from trace_bench.store.job_store import JobStore

_REMOTE: Any = None


def _job_on_worker(body: JobBody, launch: JobLaunch) -> dict[str, Any]:
    """Runs inside a Ray worker: the shared wrapper in a scratch dir, then everything it wrote."""
    import shutil
    import tempfile

    scratch = Path(tempfile.mkdtemp(prefix="trace-bench-job-"))
    try:
        job = JobStore(scratch / launch.job_id)
        outcome = run_job_body(body, launch, job)
        return {**outcome, "files": job.files()}
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def init_ray(address: str | None, num_cpus: int | None = None) -> Any:
    import ray

    if not ray.is_initialized():
        options: dict[str, Any] = {"ignore_reinit_error": True, "include_dashboard": False, "log_to_driver": False,
                                   "configure_logging": False}
        if address:
            options["address"] = address
        elif num_cpus:
            options["num_cpus"] = num_cpus
        ray.init(**options)
    return ray


class RayExecutor:
    """Same interface as :class:`~trace_bench.execution.local.LocalExecutor`."""

    def __init__(self, max_workers: int, body: JobBody, *, address: str | None = None, num_cpus: float = 1.0,
                 num_gpus: float = 0.0, memory_mb: int | None = None, max_retries: int = 0) -> None:
        global _REMOTE
        self.ray = init_ray(address, num_cpus=None)
        if _REMOTE is None:
            _REMOTE = self.ray.remote(max_calls=1)(_job_on_worker)
        options: dict[str, Any] = {"num_cpus": num_cpus, "num_gpus": num_gpus, "max_retries": 0}
        if memory_mb:
            options["memory"] = int(memory_mb) * 1024 * 1024
        self.remote = _REMOTE.options(**options)
        self.body = body
        self.max_workers = max(1, int(max_workers))
        self.max_retries = max_retries
        self.running: dict[str, dict[str, Any]] = {}

    @property
    def free_slots(self) -> int:
        return self.max_workers - len(self.running)

    def submit(self, launch: JobLaunch, tries: int = 0) -> None:
        ref = self.remote.remote(self.body, launch)
        self.running[launch.job_id] = {"ref": ref, "launch": launch, "started": time.monotonic(), "tries": tries}

    def poll(self, block_s: float = 0.5) -> list[Finished]:
        if not self.running:
            return []
        refs = {entry["ref"]: job_id for job_id, entry in self.running.items()}
        ready, _ = self.ray.wait(list(refs), num_returns=1, timeout=block_s)
        finished: list[Finished] = []
        now = time.monotonic()
        for ref in ready:
            job_id = refs[ref]
            entry = self.running.pop(job_id)
            wall = now - entry["started"]
            try:
                value = self.ray.get(ref)
            except Exception as exc:  # worker died, task cancelled, or the body raised
                lost = type(exc).__name__
                if entry["tries"] < self.max_retries and "Cancel" not in lost:
                    self.submit(entry["launch"], tries=entry["tries"] + 1)
                    continue
                finished.append(Finished(job_id, None, None, entry.get("killed") or None, wall,
                                         error=f"worker lost: {lost}: {str(exc)[:300]}"))
                continue
            finished.append(Finished(job_id, value["record"], 0, None, wall, files=value["files"],
                                     error=value.get("error")))
        for entry in list(self.running.values()):
            timeout = entry["launch"].timeout_s
            if timeout and now - entry["started"] > timeout and not entry.get("killed"):
                entry["killed"] = "timeout"
                self.ray.cancel(entry["ref"], force=True)
        return finished

    def kill_all(self, reason: str = "interrupted") -> None:
        for entry in self.running.values():
            entry["killed"] = reason
            self.ray.cancel(entry["ref"], force=True)

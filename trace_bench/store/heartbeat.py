"""``heartbeat.json`` kept fresh while a job runs: the job process's proof of life."""

from __future__ import annotations

import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from trace_bench.store.job_store import JobStore


class HeartbeatThread:
    """Rewrites ``heartbeat.json`` (pid, time) every few seconds while the job runs, so a driver or
    a person can tell a live job from a lost one, and find its process."""

    def __init__(self, job: JobStore, interval_s: float = 2.0) -> None:
        self.job = job
        self.interval_s = interval_s
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="heartbeat", daemon=True)

    def _beat(self) -> None:
        try:
            self.job.write_heartbeat()
        except OSError:
            pass

    def _loop(self) -> None:
        while not self._stop.wait(self.interval_s):
            self._beat()

    def start(self) -> None:
        self._beat()
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()

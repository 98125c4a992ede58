"""A run-wide bound on concurrent LLM requests (``llm.max_concurrency``), across job processes.

Design: *lock-file slots*.  :func:`make_limiter` names ``n`` files under
``<run_dir>/.llm_slots/``; a request holds one of them with ``flock(LOCK_EX)`` for the duration of
one provider attempt (never during a retry's backoff sleep, never for a cache hit).  Why files and
not a ``multiprocessing`` semaphore handed down by the driver:

- a job killed by its timeout (``SIGKILL`` of the whole process group) releases its slot, because
  the kernel drops a process's ``flock`` locks when it dies; a semaphore slot held by a killed
  process would be lost for the rest of the run and could deadlock it;
- nothing has to be inherited: the limiter pickles to ``(directory, n)``, so it works the same for
  jobs forked by the ``forkserver`` template, spawned processes, subprocesses and Ray workers on
  the driver's machine (on other machines it bounds each machine separately).

``flock`` locks belong to an open file description, so each process opens its own descriptors
(re-opened after a fork) and a process-local table ensures one thread per slot descriptor.
A waiting request polls with a short exponential backoff (0.5 ms to 20 ms).
"""

from __future__ import annotations

import fcntl
import os
import random
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from typing import Any

SLOTS_DIR = ".llm_slots"


class SlotLimiter:
    """At most ``n`` holders of :meth:`slot` at once among all processes using ``directory``."""

    def __init__(self, directory: str | Path, n: int) -> None:
        if n < 1:
            raise ValueError(f"max_concurrency must be >= 1, got {n}")
        self.directory = Path(directory)
        self.n = int(n)
        self._reset()

    def _reset(self) -> None:
        self._pid = os.getpid()
        self._mutex = threading.Lock()
        self._local_slots = threading.BoundedSemaphore(self.n)
        self._fds: list[int] = []
        self._held: set[int] = set()
        self._rng = random.Random(os.getpid() ^ time.perf_counter_ns())

    def __getstate__(self) -> dict[str, Any]:
        return {"directory": str(self.directory), "n": self.n}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.directory = Path(state["directory"])
        self.n = int(state["n"])
        self._reset()

    def __repr__(self) -> str:
        return f"SlotLimiter({str(self.directory)!r}, n={self.n})"

    def _descriptors(self) -> list[int]:
        if self._pid != os.getpid():  # forked: the parent's descriptors share its locks
            self._reset()
        if not self._fds:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._fds = [os.open(self.directory / f"slot-{i}.lock", os.O_RDWR | os.O_CREAT, 0o644)
                         for i in range(self.n)]
        return self._fds

    def _try_acquire(self) -> int | None:
        with self._mutex:
            fds = self._descriptors()
            start = self._rng.randrange(self.n)
            for offset in range(self.n):
                index = (start + offset) % self.n
                if index in self._held:
                    continue
                try:
                    fcntl.flock(fds[index], fcntl.LOCK_EX | fcntl.LOCK_NB)
                except BlockingIOError:
                    continue
                self._held.add(index)
                return index
        return None

    def _release(self, index: int) -> None:
        with self._mutex:
            fcntl.flock(self._fds[index], fcntl.LOCK_UN)
            self._held.discard(index)

    @contextmanager
    def slot(self) -> Iterator[None]:
        """Hold one slot for the body; blocks (polling) while all ``n`` are taken."""
        if self._pid != os.getpid():
            with self._mutex:
                self._descriptors()
        self._local_slots.acquire()
        try:
            delay = 0.0005
            index = self._try_acquire()
            while index is None:
                time.sleep(delay)
                delay = min(delay * 2, 0.02)
                index = self._try_acquire()
            try:
                yield
            finally:
                self._release(index)
        finally:
            self._local_slots.release()

    def close(self) -> None:
        """Close this process's descriptors (held slots are released with them)."""
        with self._mutex:
            for fd in self._fds:
                os.close(fd)
            self._fds = []
            self._held.clear()


_LIMITER: SlotLimiter | None = None


def make_limiter(run_dir: str | Path, n: int | None) -> SlotLimiter | None:
    """The run's limiter for ``llm.max_concurrency = n`` (``None`` when unbounded).

    Cheap and deterministic: every process of a run that calls it with the same run directory
    and ``n`` gets a limiter over the same slots, so the driver need not hand anything down.
    """
    if not n:
        return None
    return SlotLimiter(Path(run_dir) / SLOTS_DIR, int(n))


def attach_limiter(limiter: SlotLimiter | None) -> None:
    """Make ``limiter`` bound every provider request of this process (a job process runs one job)."""
    global _LIMITER
    _LIMITER = limiter


def request_slot() -> Any:
    """Context manager around one provider attempt: a slot of the attached limiter, or nothing."""
    limiter = _LIMITER
    return limiter.slot() if limiter is not None else nullcontext()


def limited() -> Any:
    """Alias of :func:`request_slot` used by the provider backends."""
    return request_slot()

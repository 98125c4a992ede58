"""The run-wide limit on concurrent LLM requests (``llm.max_concurrency``).

The driver creates one ``multiprocessing`` semaphore per run and hands it to every job process
at fork time; each job's session holds it around provider calls, so the limit holds across all
jobs of the run.  (Jobs on a Ray cluster are not covered: their limit is per worker.)
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

_LIMITER: Any = None


def set_limiter(semaphore: Any) -> None:
    global _LIMITER
    _LIMITER = semaphore


@contextlib.contextmanager
def limited() -> Iterator[None]:
    if _LIMITER is None:
        yield
        return
    _LIMITER.acquire()
    try:
        yield
    finally:
        _LIMITER.release()

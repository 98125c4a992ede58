"""The run-wide request limiter releases a slot when its holder is killed (no leaked capacity)."""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import time
from pathlib import Path

from tests.waiting import PATIENCE_S
from trace_bench.llm.limiter import make_limiter


def _hold(directory: str, ready: object) -> None:
    limiter = make_limiter(directory, 1)
    assert limiter is not None
    with limiter.slot():
        ready.set()  # type: ignore[attr-defined]
        time.sleep(60)


def test_slot_of_a_killed_holder_is_released(tmp_path: Path) -> None:
    context = mp.get_context("spawn")  # never fork the pytest process (threads of earlier tests)
    ready = context.Event()
    holder = context.Process(target=_hold, args=(str(tmp_path), ready))
    holder.start()
    assert ready.wait(PATIENCE_S)
    limiter = make_limiter(tmp_path, 1)
    assert limiter is not None
    assert limiter._try_acquire() is None, "the slot is held"
    os.kill(holder.pid, signal.SIGKILL)
    holder.join()
    index = limiter._try_acquire()
    assert index is not None, "the dead holder's slot is free at once"
    limiter._release(index)
    with limiter.slot():
        pass

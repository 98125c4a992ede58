"""Parallel jobs open one new read_write cache at the same instant (their first LLM calls): each
must get a working cache, not "database is locked" (it failed a recording job about 1 run in 3)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path
from typing import Any

from trace_bench.llm.cache import LLMCache
from trace_bench.llm.types import Completion, Usage


def _open_and_use(path: str, index: int, barrier: Any) -> str:
    barrier.wait()  # every process opens the new file at once
    try:
        cache = LLMCache(path, "read_write")
        cache.put(f"key-{index}", 0, Completion(texts=[f"answer {index}"], usage=Usage(3, 2, 5), model="m"))
        found = cache.get(f"key-{index}", 0)
        return "ok" if found is not None and found.texts == [f"answer {index}"] else f"read back {found!r}"
    except Exception as exc:  # reported to the test, which names it
        return f"{type(exc).__name__}: {exc}"


def test_processes_opening_one_new_cache_at_once_all_get_it(tmp_path: Path) -> None:
    # spawn, not fork: a fork of the pytest process copies locks held by threads of earlier tests
    # that do not exist in the child, and the child can deadlock on one of them
    context = multiprocessing.get_context("spawn")
    with context.Manager() as manager, context.Pool(4) as pool:
        for trial in range(10):  # the race was lost in 12 of 120 openings before the fix
            barrier = manager.Barrier(4)
            path = str(tmp_path / f"cache-{trial}.sqlite")
            outcomes = pool.starmap(_open_and_use, [(path, i, barrier) for i in range(4)])
            assert outcomes == ["ok"] * 4, (trial, outcomes)
            assert all(LLMCache(path, "replay").get(f"key-{i}", 0) is not None for i in range(4))

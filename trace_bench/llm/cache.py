"""Record/replay of LLM exchanges in SQLite (``llm.cache: read_write | replay``).

Keys are content keys (model, canonical messages, sampling parameters, the job's seed) plus a
per-request sample index, so repeated identical prompts at temperature > 0 get distinct recorded samples; secrets and
transport settings are never part of a key.  WAL mode and a busy timeout let several job processes
share one cache file.  ``replay`` never calls a provider and fails loudly on a miss.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from trace_bench.llm.backend import Backend
from trace_bench.llm.errors import CacheMissError
from trace_bench.llm.types import Completion, Usage

_SCHEMA = """CREATE TABLE IF NOT EXISTS completions (
    key TEXT NOT NULL, sample INTEGER NOT NULL, model TEXT NOT NULL, texts TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL, completion_tokens INTEGER NOT NULL, cost_usd REAL,
    PRIMARY KEY (key, sample))"""


_BUSY_S = 30.0


def _use_wal(db: sqlite3.Connection) -> None:
    """Switch the file to WAL. The switch needs the file to itself and SQLite answers "database is
    locked" at once, without waiting on its busy timeout, while another job process opens the same
    new cache (the first LLM calls of parallel jobs). WAL persists in the file, so a retry after the
    other process switched it is a no-op."""
    deadline = time.monotonic() + _BUSY_S
    while True:
        try:
            db.execute("PRAGMA journal_mode=WAL")
            return
        except sqlite3.OperationalError as exc:
            if "locked" not in str(exc) or time.monotonic() > deadline:
                raise
            time.sleep(0.01)  # a poll interval: the other opener holds the file for milliseconds


class LLMCache:
    def __init__(self, path: str | Path, mode: str) -> None:
        if mode not in ("read_write", "replay"):
            raise ValueError(f"cache mode must be read_write or replay, got {mode!r}")
        self.path = Path(path)
        self.mode = mode
        if mode == "replay" and not self.path.exists():
            raise CacheMissError(f"llm.cache is replay but the cache file {self.path} does not exist")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        with self._connection() as db:
            db.execute(_SCHEMA)

    def _connection(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None:
            db = sqlite3.connect(self.path, timeout=_BUSY_S, isolation_level=None)
            _use_wal(db)
            db.execute(f"PRAGMA busy_timeout={int(_BUSY_S * 1000)}")
            self._local.db = db
        return db

    def get(self, key: str, sample: int) -> Completion | None:
        row = self._connection().execute(
            "SELECT model, texts, prompt_tokens, completion_tokens, cost_usd FROM completions WHERE key=? AND sample=?",
            (key, sample)).fetchone()
        if row is None:
            return None
        model, texts, prompt, completion, cost = row
        return Completion(texts=json.loads(texts), usage=Usage(prompt, completion, prompt + completion), model=model,
                          cached=True, cost_usd=cost)

    def put(self, key: str, sample: int, completion: Completion) -> None:
        self._connection().execute(
            "INSERT OR IGNORE INTO completions VALUES (?, ?, ?, ?, ?, ?, ?)",
            (key, sample, completion.model, json.dumps(completion.texts), completion.usage.prompt_tokens,
             completion.usage.completion_tokens, completion.cost_usd))

    def wrapper(self) -> Any:
        """A ``call_wrapper`` for :class:`~trace_bench.llm.session.LLMSession`."""

        def call(backend: Backend, messages: list[dict[str, Any]], *, n: int, sample_index: int, key: str,
                 **params: Any) -> Completion:
            hit = self.get(key, sample_index)
            if hit is not None and len(hit.texts) >= n:
                return hit
            if self.mode == "replay":
                excerpt = str(messages[-1].get("content", ""))[:120].replace("\n", " ") if messages else ""
                raise CacheMissError(f"replay cache miss for model {backend.model} (sample {sample_index}): "
                                     f"no recorded answer for a prompt starting {excerpt!r}")
            completion = backend.complete(messages, n=n, sample_index=sample_index, **params)
            self.put(key, sample_index, completion)
            stored = self.get(key, sample_index)
            if stored is not None and stored.texts != completion.texts:
                # another process recorded this sample first: use its answer, so the recording run
                # behaves exactly as its replay will (this call is still paid and metered)
                completion.texts = stored.texts
            return completion

        return call

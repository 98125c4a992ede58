"""Append-only JSON-lines event logs, written as things happen (``tail -f`` shows progress).

Each line is ``{"ts": <UTC ISO-8601>, "type": ..., ...}``, masked for secrets, flushed per
line.  Readers tolerate a torn last line left by a kill.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

from trace_bench.store.masking import mask_secrets


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


class EventLog:
    """Thread-safe appender for one ``events.jsonl``."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - kept open on purpose

    def write(self, event: dict[str, Any]) -> None:
        record = {"ts": utc_now(), **event}
        line = mask_secrets(json.dumps(record, default=str, allow_nan=True))
        with self._lock:
            if self._handle.closed:
                return
            self._handle.write(line + "\n")
            self._handle.flush()

    __call__ = write

    def close(self) -> None:
        with self._lock:
            if not self._handle.closed:
                self._handle.close()


def read_events(path: str | Path) -> Iterator[dict[str, Any]]:
    """Events of a log; a truncated or corrupt line (from a kill mid-write) is skipped."""
    try:
        handle = open(path, encoding="utf-8")  # noqa: SIM115
    except FileNotFoundError:
        return
    with handle:
        for line in handle:
            line = line.strip()
            if not line:
                continue
            try:
                event = json.loads(line)
            except json.JSONDecodeError:
                continue
            if isinstance(event, dict):
                yield event

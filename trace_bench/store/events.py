"""Append-only JSON-lines logs (``events.jsonl``, ``state_history.jsonl``), written as things
happen so that ``tail -f``, the console panel and the UI show live progress.

Writing: one line per record, ``{"ts", "type", ...}``, strict JSON, masked for secrets, flushed
per line by a thread-safe appender that keeps the file open.  Reading: a torn last line (a kill
mid-write) and lines that are not a valid record are skipped; an incremental reader
(:class:`LogFollower`) keeps its offset and holds back a partial last line until it is complete.
"""

from __future__ import annotations

import json
import os
import threading
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from trace_bench._util.masking import mask_secrets
from trace_bench.store.jsonio import dumps
from trace_bench.store.models import JOB_EVENTS, RUN_EVENTS, Event, OtherEvent, StoreError, StoreModel

if TYPE_CHECKING:
    from typing_extensions import Self

Classify = Callable[[dict[str, Any]], type[StoreModel]]
_TAIL_BYTES = 8192


def utc_now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _event_class(table: Mapping[str, type[Event]]) -> Classify:
    return lambda data: table.get(str(data.get("type")), OtherEvent)


job_event_class = _event_class(JOB_EVENTS)
run_event_class = _event_class(RUN_EVENTS)


def as_event(event: Event | Mapping[str, Any], table: Mapping[str, type[Event]]) -> Event:
    """A typed event from a model or a mapping (unknown types become :class:`OtherEvent`)."""
    if isinstance(event, Event):
        return event
    data = dict(event)
    cls = table.get(str(data.get("type")), OtherEvent)
    return cls.model_validate(data)


class LineLog:
    """Thread-safe appender for one JSON-lines file (created with its directory on first use)."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._handle = open(self.path, "a", encoding="utf-8")  # noqa: SIM115 - kept open on purpose

    def append(self, record: StoreModel) -> None:
        """Write ``record`` as one line: ``ts`` (now, unless set) and ``type`` first, fields as set."""
        data = record.model_dump(mode="json", exclude_unset=True)
        data.pop("schema_version", None)
        head = {"ts": data.pop("ts", None) or utc_now()}
        kind = getattr(record, "type", None)
        if kind is not None:
            head["type"] = kind
            data.pop("type", None)
        line = mask_secrets(dumps({**head, **data, "schema_version": record.SCHEMA_VERSION}, indent=None))
        with self._lock:
            if self._handle.closed:
                return
            self._handle.write(line + "\n")
            self._handle.flush()

    def close(self) -> None:
        with self._lock:
            if not self._handle.closed:
                self._handle.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class EventLog(LineLog):
    """Appender for an ``events.jsonl``; accepts typed events or mappings (validated on write)."""

    def __init__(self, path: str | Path, table: Mapping[str, type[Event]] = JOB_EVENTS) -> None:
        super().__init__(path)
        self._table = table

    def write(self, event: Event | Mapping[str, Any]) -> None:
        self.append(as_event(event, self._table))

    __call__ = write


def _parse(line: str, classify: Classify, source: Path) -> Any:
    try:
        data = json.loads(line)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    try:
        return classify(data).load(data, source=source)
    except StoreError:
        return None


def read_lines(path: str | Path, classify: Classify, *, contains: str | None = None) -> Iterator[Any]:
    """Records of a JSON-lines file; a missing file is empty, a torn or invalid line is skipped.
    ``contains`` skips lines without that text before parsing (e.g. ``'"llm_call"'``), which
    keeps reading large logs for one kind of record cheap."""
    source = Path(path)
    try:
        handle = open(source, encoding="utf-8", errors="replace")  # noqa: SIM115
    except FileNotFoundError:
        return
    with handle:
        for line in handle:
            if contains is not None and contains not in line:
                continue
            line = line.strip()
            if line:
                record = _parse(line, classify, source)
                if record is not None:
                    yield record


def last_line(path: str | Path, classify: Classify, *, contains: str,
              accept: Callable[[Any], bool] = lambda _: True) -> Any:
    """The latest accepted record of a growing log, reading only its last few kilobytes."""
    source = Path(path)
    try:
        with open(source, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - _TAIL_BYTES))
            lines = handle.read().decode("utf-8", errors="replace").splitlines()
    except OSError:
        return None
    for line in reversed(lines):
        if contains in line:
            record = _parse(line, classify, source)
            if record is not None and accept(record):
                return record
    return None


class LogFollower:
    """Reads only what was appended to a log since the last call; a partial last line waits."""

    def __init__(self, path: str | Path, classify: Classify) -> None:
        self.path = Path(path)
        self._classify = classify
        self.offset = 0
        self._partial = ""

    def new(self) -> list[Any]:
        try:
            with open(self.path, encoding="utf-8", errors="replace") as handle:
                handle.seek(self.offset)
                data = handle.read()
                self.offset = handle.tell()
        except OSError:
            return []
        lines = (self._partial + data).split("\n")
        self._partial = lines.pop()  # "" when the data ended with a newline
        records = (_parse(line, self._classify, self.path) for line in lines if line.strip())
        return [r for r in records if r is not None]


def read_job_events(path: str | Path, *, contains: str | None = None) -> Iterable[Event]:
    return read_lines(path, job_event_class, contains=contains)

"""Readers for files of a run directory that may be half-written, killed mid-write or edited by
hand: a missing file is ``None`` (or empty), anything unreadable is a :class:`StoreError` whose
message names the file and the problem.  Viewers (the UI, the console) use the raw-text helpers;
everything else reads typed records.
"""

from __future__ import annotations

import csv
import io
import os
from pathlib import Path
from typing import Any, TypeVar

import yaml

from trace_bench.store import jsonio
from trace_bench.store.models import StoreError, StoreModel

Record = TypeVar("Record", bound=StoreModel)
TAIL_BYTES = 256 * 1024


def _whole_text(path: Path) -> str | None:
    """The file's text, ``None`` when it does not exist; :class:`StoreError` when unreadable."""
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise StoreError(f"{path}: cannot be read ({exc})") from None


def read_json(path: Path) -> Any:
    """Parsed JSON, ``None`` when the file does not exist; :class:`StoreError` when unreadable."""
    text = _whole_text(path)
    if text is None:
        return None
    try:
        return jsonio.loads(text)
    except ValueError as exc:
        raise StoreError(f"{path}: not valid JSON ({exc}); the file is truncated or was edited by hand") from None


def read_record(path: Path, model: type[Record]) -> Record | None:
    """A typed record (upgraded to the current version), or ``None`` when the file does not exist."""
    data = read_json(path)
    return None if data is None else model.load(data, source=path)


#: libyaml's safe loader (10x faster on a 100,000-seed snapshot) when PyYAML was built with it
_SAFE_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def read_yaml(path: Path) -> Any:
    """Parsed YAML (safe), ``None`` when the file does not exist; :class:`StoreError` when unreadable."""
    text = _whole_text(path)
    if text is None:
        return None
    try:
        return yaml.load(text, Loader=_SAFE_LOADER)  # noqa: S506 - a safe loader, libyaml's when present
    except yaml.YAMLError as exc:
        raise StoreError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None


def read_csv(path: Path) -> tuple[list[str], list[list[str]]] | None:
    """(header, rows) of a table; rows with the wrong number of cells (torn) are dropped.  Equal
    cells are one string object, so a 100,000-row results.csv costs its distinct values only.
    ``None`` when the file does not exist; :class:`StoreError` when it is empty or not CSV."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"{path}: cannot be read ({exc})") from None
    shared: dict[str, str] = {}  # one object per distinct cell: most columns repeat a few values
    try:
        reader = csv.reader(io.StringIO(text))
        header = next(reader, None)
        if header is None:
            raise StoreError(f"{path}: empty file (no header row)")
        rows = [[shared.setdefault(cell, cell) for cell in row] for row in reader if len(row) == len(header)]
    except csv.Error as exc:
        raise StoreError(f"{path}: cannot be read as CSV ({exc})") from None
    return header, rows


def read_text(path: Path, limit: int = TAIL_BYTES) -> str | None:
    """A whole text file (its last lines when larger than ``limit``); ``None`` when missing."""
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"{path.name}: cannot be read: {exc}") from None
    if size > limit:
        return tail_lines(path, 400)
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise StoreError(f"{path.name}: cannot be read: {exc}") from None


def tail_lines(path: Path, lines: int = 200, max_bytes: int = TAIL_BYTES) -> str | None:
    """The last ``lines`` lines of a growing log (only its last ``max_bytes`` are read)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - max_bytes))
            data = handle.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"{path.name}: cannot be read: {exc}") from None
    chunks = data.decode("utf-8", errors="replace").splitlines()
    if size > max_bytes and chunks:
        chunks = chunks[1:]  # the first line read is probably cut
    return "\n".join(chunks[-lines:])


def file_stamp(*paths: Path) -> tuple[tuple[int, int], ...]:
    """(mtime_ns, size) of each path, (0, 0) when absent: cheap change detection for live views."""
    stamps = []
    for path in paths:
        try:
            stat = path.stat()
            stamps.append((stat.st_mtime_ns, stat.st_size))
        except OSError:
            stamps.append((0, 0))
    return tuple(stamps)

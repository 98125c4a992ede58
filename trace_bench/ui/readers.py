"""Defensive readers for the UI: every run file becomes either data or a readable message.

The UI reads run directories that may be half-written (a run in progress), killed mid-write or
edited by hand.  None of these may take the server down, so each reader returns a value plus a
problem string instead of raising.  Everything that leaves these helpers as text is passed
through :func:`trace_bench.store.masking.mask_secrets`: this module is the boundary between the
file system and the browser, and no secret may cross it.
"""

from __future__ import annotations

import csv
import io
import json
import os
from pathlib import Path
from typing import Any

from trace_bench.store.masking import mask_secrets

TAIL_BYTES = 256 * 1024


def masked(text: Any) -> str:
    """Text as it may be shown in the browser (secret values and key shapes replaced)."""
    return mask_secrets(text if isinstance(text, str) else str(text))


def read_json(path: Path) -> tuple[Any, str | None]:
    """``(data, None)`` or ``(None, problem)``; a missing file is a problem, not an exception."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except FileNotFoundError:
        return None, f"{path.name}: not written yet"
    except (OSError, UnicodeDecodeError) as exc:
        return None, f"{path.name}: cannot be read ({exc})"
    try:
        return json.loads(text), None
    except ValueError as exc:
        return None, f"{path.name}: not valid JSON ({exc}); the file is truncated or was edited by hand"


def json_text(path: Path) -> str:
    """Pretty JSON for a code viewer, or the problem as a one-line comment-like message."""
    data, problem = read_json(path)
    if problem:
        return f"// {masked(problem)}"
    return masked(json.dumps(data, indent=2, sort_keys=False, default=str))


def read_text(path: Path, limit: int = TAIL_BYTES) -> str:
    """A whole (small) text file, masked; a message when missing; the tail when it is large."""
    try:
        size = Path(path).stat().st_size
    except FileNotFoundError:
        return f"({path.name}: not written yet)"
    except OSError as exc:
        return f"({path.name}: cannot be read: {exc})"
    if size > limit:
        return tail_lines(path, 400)
    try:
        return masked(Path(path).read_text(encoding="utf-8", errors="replace"))
    except OSError as exc:
        return f"({path.name}: cannot be read: {exc})"


def tail_lines(path: Path, lines: int = 200, max_bytes: int = TAIL_BYTES) -> str:
    """The last ``lines`` lines of a growing log (only its last ``max_bytes`` are read)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - max_bytes))
            data = handle.read()
    except FileNotFoundError:
        return f"({Path(path).name}: not written yet)"
    except OSError as exc:
        return f"({Path(path).name}: cannot be read: {exc})"
    text = data.decode("utf-8", errors="replace")
    chunks = text.splitlines()
    if size > max_bytes and chunks:
        chunks = chunks[1:]  # the first line read is probably cut
    return masked("\n".join(chunks[-lines:]))


def read_csv_rows(path: Path) -> tuple[list[dict[str, str]], str | None]:
    """Rows of a CSV written by the runner; torn rows (wrong field count) are dropped."""
    try:
        text = Path(path).read_text(encoding="utf-8", errors="replace")
    except FileNotFoundError:
        return [], f"{path.name}: not written yet"
    except OSError as exc:
        return [], f"{path.name}: cannot be read ({exc})"
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error as exc:
        return [], f"{path.name}: cannot be read as CSV ({exc})"
    if not rows:
        return [], f"{path.name}: empty"
    header = rows[0]
    good = [dict(zip(header, row, strict=True)) for row in rows[1:] if len(row) == len(header)]
    return good, None


def frame_of(rows: list[dict[str, Any]], columns: list[str] | None = None) -> Any:
    """A masked pandas frame for ``gr.Dataframe`` (strings masked, numbers kept as numbers)."""
    import pandas as pd

    frame = pd.DataFrame(rows)
    if columns is not None:
        frame = frame.reindex(columns=[c for c in columns if c in frame.columns] or columns)
    for column in frame.columns:
        if not pd.api.types.is_numeric_dtype(frame[column]):  # object or pandas' string dtype
            frame[column] = frame[column].map(lambda v: masked(v) if isinstance(v, str) else v)
    return frame


def numeric(value: Any) -> float | None:
    """A CSV cell as a number (``None`` for empty or unparsable cells)."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if number == number else None  # NaN -> None


def file_stamp(*paths: Path) -> tuple[tuple[int, int], ...]:
    """(mtime_ns, size) of each path, (0, 0) when absent: cheap change detection for live views."""
    stamps = []
    for path in paths:
        try:
            stat = Path(path).stat()
            stamps.append((stat.st_mtime_ns, stat.st_size))
        except OSError:
            stamps.append((0, 0))
    return tuple(stamps)

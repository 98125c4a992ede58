"""``artifacts/curve.csv``, the job's curve: written a row per step by the job process, closed by the
driver after a kill, read back as typed rows.

The header is the fixed ``CURVE_COLUMNS``, then an ``obj_<metric>`` column per objective named up
front.  A row torn by a kill (the wrong number of cells) is dropped by every reader; a cell that is
not a number reads as empty.  :class:`~trace_bench.store.job_store.JobStore` is the entrance: its
curve methods call these with the job's path.
"""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

from trace_bench.store import jsonio
from trace_bench.store.models import CURVE_COLUMNS, OBJECTIVE_PREFIX, CurveRow, StoreError


class CurveWriter:
    """``artifacts/curve.csv``, one row per step, flushed per row (non-finite numbers left empty):
    the fixed ``CURVE_COLUMNS``, then ``obj_<metric>`` per objective named up front (a row's
    ``objectives`` outside those names are not written: the header is fixed once written)."""

    def __init__(self, path: Path, objectives: list[str] | None = None) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._handle = open(path, "w", encoding="utf-8", newline="")  # noqa: SIM115 - open for the job's life
        self._writer = csv.writer(self._handle, lineterminator="\n")
        self._objectives = list(objectives or [])
        self._writer.writerow([*CURVE_COLUMNS, *(OBJECTIVE_PREFIX + name for name in self._objectives)])
        self._handle.flush()

    @property
    def closed(self) -> bool:
        return self._handle.closed

    def row(self, row: CurveRow) -> None:
        values = jsonio.finite(row.model_dump())
        objectives = values.get("objectives") or {}
        cells = [values.get(c) for c in CURVE_COLUMNS] + [objectives.get(name) for name in self._objectives]
        self._writer.writerow(["" if value is None else value for value in cells])
        self._handle.flush()

    def close(self) -> None:
        self._handle.close()


def append_curve_row(path: Path, row: CurveRow) -> None:
    """Add a row to the curve of a job that no longer runs, in the file's column order; a row torn
    by the kill stays a torn line of its own (readers drop it).  Nothing when there is no curve."""
    header, _ = curve_table(path)
    if not header:
        return
    values = jsonio.finite(row.model_dump())
    objectives = values.get("objectives") or {}
    cells = [objectives.get(name[len(OBJECTIVE_PREFIX):]) if name.startswith(OBJECTIVE_PREFIX) else values.get(name)
             for name in header]
    with open(path, "rb") as handle:
        torn = False
        if handle.seek(0, os.SEEK_END) > 0:
            handle.seek(-1, os.SEEK_END)
            torn = handle.read(1) != b"\n"
    with open(path, "a", encoding="utf-8", newline="") as handle:
        if torn:
            handle.write("\n")
        csv.writer(handle, lineterminator="\n").writerow(["" if value is None else value for value in cells])


def read_curve(path: Path) -> list[CurveRow]:
    """Curve points (objective columns included); a torn last row and cells that are not numbers
    are dropped/blank."""
    header, rows = curve_table(path)
    points = []
    for row in rows:
        data: dict[str, Any] = {}
        objectives: dict[str, float] = {}
        for name, cell in zip(header, row, strict=True):
            if cell in ("", "nan"):
                continue
            if name.startswith(OBJECTIVE_PREFIX):
                value = _number(cell)
                if value is not None:
                    objectives[name[len(OBJECTIVE_PREFIX):]] = value
            elif name in CURVE_COLUMNS:
                data[name] = cell
        try:
            points.append(CurveRow.model_validate({**data, "objectives": objectives}))
        except ValueError:
            continue
    return points


def curve_cells(path: Path) -> tuple[list[str], list[list[str]]]:
    """(the file's header, rows as strings in ``CURVE_COLUMNS`` order, objective columns left out);
    a row with the wrong number of cells (torn by a kill) is dropped.  Fast path for bulk readers."""
    header, body = curve_table(path)
    if header and header != list(CURVE_COLUMNS):
        order = [header.index(c) if c in header else None for c in CURVE_COLUMNS]
        body = [[row[i] if i is not None else "" for i in order] for row in body]
    return header, body


def curve_table(path: Path) -> tuple[list[str], list[list[str]]]:
    """The file's header and its whole rows, as written; ([], []) when there is none."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            rows = list(csv.reader(handle))
    except FileNotFoundError:
        return [], []
    except (OSError, UnicodeDecodeError, csv.Error) as exc:
        raise StoreError(f"{path}: cannot be read ({exc})") from None
    if not rows:
        return [], []
    header, body = rows[0], [row for row in rows[1:] if len(row) == len(rows[0])]
    lacking = [c for c in ("step", "best_score") if c not in header]
    if lacking:
        raise StoreError(f"{path}: header lacks column(s) {', '.join(lacking)}")
    return header, body


def _number(cell: str) -> float | None:
    try:
        return float(cell)
    except ValueError:
        return None

"""Defensive readers for the UI: every run file becomes either data or a readable message.

The UI reads run directories that may be half-written (a run in progress), killed mid-write or
edited by hand.  None of these may take the server down, so each reader returns a value plus a
problem string instead of raising.  The files themselves are read by the store
(``trace_bench.store``), which owns the run directory; this module turns its errors into
messages and passes everything that leaves it as text through
:func:`trace_bench._util.masking.mask_secrets`: it is the boundary between the run directory and
the browser, and no secret may cross it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

from trace_bench._util.masking import mask_secrets
from trace_bench.store import reading
from trace_bench.store.models import StoreError
from trace_bench.store.run_store import RunStore

TAIL_BYTES = reading.TAIL_BYTES


def masked(text: Any) -> str:
    """Text as it may be shown in the browser (secret values and key shapes replaced)."""
    return mask_secrets(text if isinstance(text, str) else str(text))


_MARKDOWN = re.compile(r"([\\`*_{}\[\]()#|<>~!])")


def markdown_text(text: Any) -> str:
    """Masked text for a ``gr.Markdown``, shown literally: brackets, emphasis and HTML characters are
    escaped, so ``[0, 0]`` or ``<b>`` in an error or a run id never becomes a link or markup."""
    return _MARKDOWN.sub(r"\\\1", masked(text))


def problem_of(exc: StoreError, path: Path) -> str:
    """The store's message with the file named by its own name (the UI shows no server paths)."""
    return str(exc).replace(str(path), path.name, 1)


def read_json(path: Path) -> tuple[Any, str | None]:
    """``(data, None)`` or ``(None, problem)``; a missing file is a problem, not an exception."""
    path = Path(path)
    try:
        data = reading.read_json(path)
    except StoreError as exc:
        return None, problem_of(exc, path)
    if data is None:
        return None, f"{path.name}: not written yet"
    return data, None


def json_text(path: Path) -> str:
    """Pretty JSON for a code viewer, or the problem as a one-line comment-like message."""
    data, problem = read_json(path)
    if problem:
        return f"// {masked(problem)}"
    return masked(json.dumps(data, indent=2, sort_keys=False, default=str))


def read_text(path: Path, limit: int | None = TAIL_BYTES) -> str:
    """A whole text file, masked (its last lines when larger than ``limit``); a message when missing."""
    path = Path(path)
    try:
        text = reading.read_text(path, limit if limit is not None else 1 << 62)
    except StoreError as exc:
        return f"({problem_of(exc, path)})"
    return f"({path.name}: not written yet)" if text is None else masked(text)


def tail_lines(path: Path, lines: int = 200, max_bytes: int = TAIL_BYTES) -> str:
    """The last ``lines`` lines of a growing log (only its last ``max_bytes`` are read), masked."""
    path = Path(path)
    try:
        text = reading.tail_lines(path, lines, max_bytes)
    except StoreError as exc:
        return f"({problem_of(exc, path)})"
    return f"({path.name}: not written yet)" if text is None else masked(text)


def read_csv_rows(path: Path) -> tuple[list[dict[str, str]], str | None]:
    """Rows of a CSV written by the runner; torn rows (wrong field count) are dropped."""
    path = Path(path)
    try:
        table = reading.read_csv(path)
    except StoreError as exc:
        message = problem_of(exc, path)
        return [], f"{path.name}: empty" if "empty file" in message else message
    if table is None:
        return [], f"{path.name}: not written yet"
    header, rows = table
    return [dict(zip(header, row, strict=True)) for row in rows], None


def read_result_rows(run_dir: Path) -> tuple[list[dict[str, Any]], str | None]:
    """The rows of a run's results.csv typed by the job record's columns (through the store), with
    the problem when it cannot be read."""
    store = RunStore(run_dir)
    try:
        table = store.read_result_rows(original=False)
    except StoreError as exc:
        message = problem_of(exc, store.results_csv_path)
        return [], "results.csv: empty" if "empty file" in message else message
    if table is None:
        return [], "results.csv: not written yet"
    columns, rows = table
    names = [column.name for column in columns]
    return [dict(zip(names, row, strict=True)) for row in rows], None


_DECIMAL = re.compile(r"-?\d+\.\d*(?:[eE][-+]?\d+)?|-?\d+[eE]-\d+")
DISPLAY_DIGITS = 4


def display_value(value: Any) -> Any:
    """A cell as shown: decimals (floats, or CSV text such as ``-0.08623333333333338``) rounded to
    ``DISPLAY_DIGITS`` significant digits; other strings masked; integers and ids left as they are."""
    if isinstance(value, float):
        return value if value != value else float(f"{value:.{DISPLAY_DIGITS}g}")
    if isinstance(value, (dict, list)):  # a typed JSON column (params, denials per kind): shown as its text
        return masked(json.dumps(value, sort_keys=True, default=str)) if value else ""
    if isinstance(value, str):
        if _DECIMAL.fullmatch(value.strip()):
            return float(f"{float(value):.{DISPLAY_DIGITS}g}")
        return masked(value)
    return value


def labelled_results(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """results.csv rows with ``task`` as every table names it: one task under one set of
    eval_kwargs is its own task (``task_label``; older runs: from an ``;eval:`` params label)."""
    from trace_bench.store.ranking import variant_of

    shown = []
    for row in rows:
        task, params = variant_of(row.get("task", ""), row.get("task_label"), row.get("params_label"))
        shown.append({**row, "task": task, "params_label": params})
    return shown


def read_leaderboard_rows(run_dir: Path) -> tuple[list[dict[str, Any]], str | None]:
    """A run's leaderboard.csv rows typed by the store, with the problem when it cannot be read."""
    store = RunStore(run_dir)
    try:
        rows = store.read_leaderboard_rows()
    except StoreError as exc:
        message = problem_of(exc, store.leaderboard_path)
        return [], "leaderboard.csv: empty" if "empty file" in message else message
    return (rows, None) if rows is not None else ([], "leaderboard.csv: not written yet")


def leaderboard_display(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """leaderboard.csv rows (typed) with a ``seeds`` column after the arm: the scored seeds, and
    ``k/N seeds, incomplete`` for an arm with failed or missing seeds (ranked after the complete arms)."""
    from trace_bench.store.ranking import seeds_cell

    shown = []
    for row in rows:
        count, planned = row.get("count"), row.get("planned")
        seeds: Any = count if row.get("complete") is not False or not planned else \
            f"{seeds_cell(count or 0, planned)}, incomplete"
        ordered: dict[str, Any] = {}
        for key, value in row.items():
            ordered[key] = value
            if key == "params_label":
                ordered["seeds"] = seeds
        shown.append(ordered)
    return shown


def frame_of(rows: list[dict[str, Any]], columns: list[str] | None = None) -> Any:
    """A pandas frame for ``gr.Dataframe``: strings masked, decimals rounded for display
    (:func:`display_value`), the run's files untouched."""
    import pandas as pd

    frame = pd.DataFrame(rows)
    if columns is not None:
        frame = frame.reindex(columns=[c for c in columns if c in frame.columns] or columns)
    for column in frame.columns:
        if pd.api.types.is_float_dtype(frame[column]) or not pd.api.types.is_numeric_dtype(frame[column]):
            frame[column] = frame[column].map(display_value)
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
    return reading.file_stamp(*(Path(p) for p in paths))


def with_analysis(run_dir: Path, panel: Callable[[Any], str], *, needs_extra: Callable[[str], str],
                  unreadable: Callable[[str], str]) -> str:
    """A panel drawn by the analysis layer: ``panel(jobs)`` on the run's jobs as that layer loads
    them (``panel`` imports what else it uses of it); ``needs_extra(why)`` where the analysis extra
    is missing, ``unreadable(why)`` where the run cannot be read yet."""
    try:
        from trace_bench.analysis.load import RunDirError, load_jobs
    except ImportError as exc:
        return needs_extra(str(exc))
    try:
        jobs = load_jobs(run_dir)
    except RunDirError as exc:
        return unreadable(str(exc))
    try:
        return panel(jobs)
    except ImportError as exc:
        return needs_extra(str(exc))

"""``meta/files_index.json``: every file of a run with its size, rebuilt incrementally.

A job directory unchanged since the previous index keeps its lines as they were (every write in a
job directory is an atomic rename, which bumps the directory's mtime; a directory touched in the
same timestamp tick as the index is looked at again), so a resume of a 100,000-job run neither
walks every job's files nor re-encodes their entries.  The run-level files are always listed anew.
The layout is one entry per line (see :func:`trace_bench.store.jsonio.listing_chunks`); an index
in another layout is simply rebuilt.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from trace_bench.store.atomic import write_text_chunks
from trace_bench.store.events import utc_now
from trace_bench.store.jsonio import dumps, listing_chunks
from trace_bench.store.models import FilesIndex

_JOB_LINE = '{"path": "jobs/'


def write_files_index(root: Path, target: Path) -> int:
    """Write the index of ``root`` to ``target``; returns how many files it lists.

    Streamed: job directories are visited in the index's order and their lines written as they
    come, and the previous index is read alongside in the same order, so memory does not grow with
    the run (a 100,000-job run lists a million files)."""
    run_level: list[tuple[list[str], str]] = []  # (sort key, entry line): the few files outside jobs/
    for directory, names, filenames in os.walk(root):
        rel = os.path.relpath(directory, root)
        names[:] = [n for n in names if not n.startswith(".") and not (rel == "." and n == "jobs")]
        prefix = "" if rel == "." else rel + "/"
        run_level += [(path.split("/"), _entry(path, size)) for path, size in _sizes(directory, prefix, filenames)]
    run_level.sort(key=lambda item: item[0])
    count = 0

    def lines() -> Iterator[str]:
        nonlocal count
        before_jobs = [line for key, line in run_level if key < _JOBS_KEY]
        after_jobs = [line for key, line in run_level if key >= _JOBS_KEY]
        yield from before_jobs
        with _PreviousJobLines(target) as previous:
            for name in _job_names(root / "jobs"):
                path = os.path.join(root, "jobs", name)
                kept = previous.lines_of(name)
                if kept is None or _mtime(path) >= previous.since:
                    kept = [_entry(file, size) for file, size in sorted(_walk_job(name, path),
                                                                        key=lambda f: f[0].split("/"))]
                count += len(kept)
                yield from kept
        yield from after_jobs
        count += len(before_jobs) + len(after_jobs)

    head = FilesIndex(run_dir=str(root), generated_at=utc_now()).record()
    write_text_chunks(target, listing_chunks(head, "files", lines(), raw=True))
    return count


_JOBS_KEY = ["jobs", ""]  # sorts after a run-level ["jobs"] and before every ["jobs", <job>]


def _entry(path: str, size: int) -> str:
    return dumps({"path": path, "bytes": size}, indent=None)


class _PreviousJobLines:
    """The previous index's entry lines of each job directory, read in step with the new index:
    both list job directories in name order, so one pass over the old file serves the whole walk
    (a directory the old index lacks, or one it listed out of order, is simply walked again).
    ``since``: the old index's mtime (ns), taken from the file read; 0 when there is none or it
    has another layout, and then nothing of it is used."""

    def __init__(self, target: Path) -> None:
        self._handle: TextIO | None = None
        self.since = 0
        try:
            self._handle = open(target, encoding="utf-8")  # closed by __exit__
            if self._handle.readline().rstrip().endswith('"files": ['):
                self.since = os.fstat(self._handle.fileno()).st_mtime_ns
            else:
                self._handle.close()
                self._handle = None
        except (OSError, UnicodeDecodeError):
            if self._handle is not None:
                self._handle.close()
            self._handle = None
        self._pending: tuple[str, str] | None = None  # a line read ahead: (job name, entry text)

    def __enter__(self) -> _PreviousJobLines:
        return self

    def __exit__(self, *_: object) -> None:
        if self._handle is not None:
            self._handle.close()

    def _next(self) -> tuple[str, str] | None:
        if self._pending is not None:
            item, self._pending = self._pending, None
            return item
        if self._handle is None:
            return None
        try:
            for line in self._handle:
                if line.startswith(_JOB_LINE):
                    text = line.rstrip().rstrip(",")
                    end = text.find("/", len(_JOB_LINE))
                    if end > 0:
                        return text[len(_JOB_LINE):end], text
        except (OSError, UnicodeDecodeError):
            pass
        self._handle.close()
        self._handle = None
        return None

    def lines_of(self, name: str) -> list[str] | None:
        """The old lines of job directory ``name`` (None when the old index has none for it)."""
        while (item := self._next()) is not None and item[0] < name:
            continue  # a directory gone since, or listed out of order
        if item is None:
            return None
        if item[0] > name:
            self._pending = item
            return None
        lines = [item[1]]
        while (item := self._next()) is not None and item[0] == name:
            lines.append(item[1])
        self._pending = item
        return lines


def _walk_job(name: str, job_path: str) -> Iterator[tuple[str, int]]:
    prefix = f"jobs/{name}/"
    for directory, names, filenames in os.walk(job_path):
        names[:] = [n for n in names if not n.startswith(".")]
        rel = os.path.relpath(directory, job_path)
        yield from _sizes(directory, prefix if rel == "." else f"{prefix}{rel}/", filenames)


def _sizes(directory: str, prefix: str, names: list[str]) -> list[tuple[str, int]]:
    out = []
    for name in names:
        if name.startswith("."):
            continue
        try:
            out.append((prefix + name, os.stat(os.path.join(directory, name)).st_size))
        except OSError:
            continue
    return out


def _job_names(directory: Path) -> list[str]:
    """Names of the job directories, in the index's order."""
    try:
        with os.scandir(directory) as entries:
            return sorted(entry.name for entry in entries if entry.is_dir() and not entry.name.startswith("."))
    except FileNotFoundError:
        return []


def _mtime(path: str) -> int:
    try:
        return os.stat(path).st_mtime_ns
    except OSError:
        return 1 << 62

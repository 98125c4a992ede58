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

from trace_bench.store.atomic import write_text_chunks
from trace_bench.store.events import utc_now
from trace_bench.store.jsonio import dumps, listing_chunks
from trace_bench.store.models import FilesIndex

_JOB_LINE = '{"path": "jobs/'


def write_files_index(root: Path, target: Path) -> int:
    """Write the index of ``root`` to ``target``; returns how many files it lists."""
    kept, since = _previous_job_lines(target)
    blocks: list[tuple[list[str], list[str]]] = []  # (sort key, entry lines)
    for directory, names, filenames in os.walk(root):
        rel = os.path.relpath(directory, root)
        names[:] = [n for n in names if not n.startswith(".") and not (rel == "." and n == "jobs")]
        prefix = "" if rel == "." else rel + "/"
        blocks += [(path.split("/"), [_entry(path, size)]) for path, size in _sizes(directory, prefix, filenames)]
    for entry in _job_dirs(root / "jobs"):
        lines = kept.get(entry.name)
        if lines is None or _mtime(entry) >= since:
            lines = [_entry(path, size) for path, size in sorted(_walk_job(entry), key=lambda f: f[0].split("/"))]
        if lines:
            blocks.append((["jobs", entry.name], lines))
    blocks.sort(key=lambda block: block[0])
    head = FilesIndex(run_dir=str(root), generated_at=utc_now()).record()
    write_text_chunks(target, listing_chunks(head, "files", (line for _, lines in blocks for line in lines), raw=True))
    return sum(len(lines) for _, lines in blocks)


def _entry(path: str, size: int) -> str:
    return dumps({"path": path, "bytes": size}, indent=None)


def _previous_job_lines(target: Path) -> tuple[dict[str, list[str]], int]:
    """The previous index's entry lines per job directory, and its mtime (ns; 0 when unusable)."""
    kept: dict[str, list[str]] = {}
    try:
        since = os.stat(target).st_mtime_ns
        with open(target, encoding="utf-8") as handle:
            if not handle.readline().rstrip().endswith('"files": ['):
                return {}, 0  # another layout: rebuild everything
            for line in handle:
                if line.startswith(_JOB_LINE):
                    text = line.rstrip().rstrip(",")
                    end = text.find("/", len(_JOB_LINE))
                    if end > 0:
                        kept.setdefault(text[len(_JOB_LINE):end], []).append(text)
    except OSError:
        return {}, 0
    return kept, since


def _walk_job(entry: os.DirEntry[str]) -> Iterator[tuple[str, int]]:
    prefix = f"jobs/{entry.name}/"
    for directory, names, filenames in os.walk(entry.path):
        names[:] = [n for n in names if not n.startswith(".")]
        rel = os.path.relpath(directory, entry.path)
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


def _job_dirs(directory: Path) -> list[os.DirEntry[str]]:
    try:
        return [entry for entry in os.scandir(directory) if entry.is_dir() and not entry.name.startswith(".")]
    except FileNotFoundError:
        return []


def _mtime(entry: os.DirEntry[str]) -> int:
    try:
        return entry.stat().st_mtime_ns
    except OSError:
        return 1 << 62

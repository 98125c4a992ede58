"""The ``trace_bench`` imports each of the package's files holds, kept beside its byte code.

Computing a sandbox's view (:mod:`trace_bench.sandbox.view`) parses the import closure of its
targets: ~100 of the package's modules, 0.1 s of every job template's start (the largest item of
the stub smoke run's path to its job).  What a file imports changes only when the file does, so
the answer is kept per file with the file's stamp (``st_mtime_ns``, ``st_size``), as Python keeps
byte code: a file whose stamp differs is parsed again, the rest are read from the index.

Where: one JSON file in the package's own ``__pycache__``.  Whoever can write there can already
replace the package's byte code, so keeping the index there trusts nobody new (a cache in the
user's home would let anything that writes there widen what a sandbox sees).  Like byte code it
is not written under ``PYTHONDONTWRITEBYTECODE`` (``sys.dont_write_bytecode``) or where the
directory is read-only; ``make install`` fills it for the whole package (``python -m
trace_bench.sandbox.view``), so a run reads it there too.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
import threading
from collections.abc import Callable, Iterable
from pathlib import Path

#: (imports outside function bodies, imports inside them), each the sorted names the file's
#: import statements name (absolute, relative ones resolved)
Entry = tuple[list[str], list[str]]
#: parses one file into its :data:`Entry` (None where it cannot be read or parsed)
Parser = Callable[[Path], "Entry | None"]

_FORMAT = 1
_LOCK = threading.Lock()


class ImportIndex:
    """The entries of one package's files, loaded from its index file at first use and written
    back (atomically, whole) by :meth:`save` when an entry was added or replaced."""

    def __init__(self, location: Path, parse: Parser) -> None:
        self._location = location
        self._parse = parse
        self._entries: dict[str, list[object]] | None = None
        self._changed = False

    def _load(self) -> dict[str, list[object]]:
        if self._entries is None:
            self._entries = {}
            try:
                data = json.loads(self._location.read_text(encoding="utf-8"))
                if isinstance(data, dict) and data.get("format") == _FORMAT and isinstance(data.get("files"), dict):
                    self._entries = data["files"]
            except (OSError, ValueError):
                pass
        return self._entries

    def imports(self, path: Path) -> Entry | None:
        """What ``path`` imports, from the index where its stamp matches, else parsed (and kept)."""
        try:
            stat = os.stat(path)
        except OSError:
            return None
        stamp = [stat.st_mtime_ns, stat.st_size]
        key = str(path)
        with _LOCK:
            entries = self._load()
            entry = entries.get(key)
            if isinstance(entry, list) and len(entry) == 4 and entry[:2] == stamp and _names(entry[2]) \
                    and _names(entry[3]):
                return list(entry[2]), list(entry[3])  # type: ignore[call-overload]
        parsed = self._parse(path)
        if parsed is not None:
            with _LOCK:
                entries[key] = [*stamp, parsed[0], parsed[1]]
                self._changed = True
        return parsed

    def save(self, *, explicitly: bool = False) -> None:
        """Write the index if an entry changed and byte code may be written (``explicitly``: even
        under ``PYTHONDONTWRITEBYTECODE``, as ``compileall`` writes byte code); quietly not otherwise
        (a read-only installation, a sandbox, a full disk: the next process parses again)."""
        with _LOCK:
            if not self._changed or (sys.dont_write_bytecode and not explicitly) or self._entries is None:
                return
            text = json.dumps({"format": _FORMAT, "files": self._entries}, sort_keys=True)
            self._changed = False
        try:
            self._location.parent.mkdir(exist_ok=True)
            fd, temporary = tempfile.mkstemp(dir=self._location.parent, prefix=".imports-", suffix=".tmp")
            try:
                os.fchmod(fd, 0o644)  # readable as the byte code beside it is (mkstemp makes it 0600)
                with os.fdopen(fd, "w", encoding="utf-8") as handle:
                    handle.write(text)
                os.replace(temporary, self._location)
            except BaseException:
                os.unlink(temporary)
                raise
        except OSError:
            pass


def _names(value: object) -> bool:
    """Whether ``value`` is a list of module names (anything else in the file is not an entry)."""
    return isinstance(value, list) and all(isinstance(name, str) for name in value)


def index_path(package_root: Path) -> Path:
    """The index file of the package at ``package_root`` (one per interpreter, as byte code is)."""
    tag = sys.implementation.cache_tag or "python"
    return package_root / "__pycache__" / f"sandbox-imports.{tag}.json"


def fill(index: ImportIndex, files: Iterable[Path]) -> int:
    """Index every one of ``files`` and write the index (asked for: whatever
    ``PYTHONDONTWRITEBYTECODE`` says); the number of files read."""
    count = sum(index.imports(path) is not None for path in files)
    index.save(explicitly=True)
    return count

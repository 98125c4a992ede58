"""The one atomic writer: temp file in the same directory, fsync, rename.

A crash at any instant leaves either the old file or the new one, never a torn file.  Only the
store's own modules call these; everything else goes through ``RunStore``/``JobStore``.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from trace_bench._util.masking import mask_secrets
from trace_bench.store.jsonio import dumps


def _current_umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


_FILE_MODE = 0o666 & ~_current_umask()  # mkstemp creates 0600 files; results are meant to be shared


def fsync_dir(directory: Path) -> None:
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def write_bytes(path: str | Path, data: bytes, *, durable: bool = True) -> None:
    write_chunks(path, [data], durable=durable)


def write_text_chunks(path: str | Path, chunks: Iterable[str], *, durable: bool = True) -> None:
    """Like :func:`write_text` for a file too large to hold as one string: each chunk is masked
    and written as it comes (a chunk must not split a secret: give whole lines or records)."""
    write_chunks(path, (mask_secrets(chunk).encode("utf-8") for chunk in chunks), durable=durable)


def write_chunks(path: str | Path, chunks: Iterable[bytes], *, durable: bool = True) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, _FILE_MODE)
        with os.fdopen(fd, "wb") as handle:
            for data in chunks:
                handle.write(data)
            handle.flush()
            if durable:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise
    if durable:
        fsync_dir(path.parent)


def write_text(path: str | Path, text: str, *, durable: bool = True, mask: bool = True) -> None:
    write_bytes(path, (mask_secrets(text) if mask else text).encode("utf-8"), durable=durable)


def write_json(path: str | Path, data: Any, *, durable: bool = True) -> None:
    """Strict JSON (non-finite floats become null), masked, replaced atomically."""
    write_text(path, dumps(data) + "\n", durable=durable)

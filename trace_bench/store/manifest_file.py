"""``meta/manifest.json``, the run's plan: written with one job entry per line, so a 100,000-job
manifest is never one string in memory, and read back whole, as its head alone, entry by entry, or
as the head with the job ids.

The one-entry-per-line layout starts with the head's fields and ``"jobs": [`` on its first line;
an older, indented file is read whole.  :class:`~trace_bench.store.run_store.RunStore` is the
entrance: its manifest methods call these with the run's path.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any, TextIO

from trace_bench.store.atomic import write_text_chunks
from trace_bench.store.jsonio import listing_chunks, loads
from trace_bench.store.models import Manifest, ManifestJob, StoreError
from trace_bench.store.reading import read_record

_JOBS_MARKER = ', "jobs": ['


def write_manifest_stream(path: Path, head: Manifest, entries: Iterable[dict[str, Any]]) -> None:
    """The manifest ``head`` with ``entries`` (JSON-ready job entries) as its jobs, one per line,
    written as they come."""
    write_text_chunks(path, listing_chunks(head.record(), "jobs", entries))


def read_manifest(path: Path) -> Manifest | None:
    return read_record(path, Manifest)


def _open(path: Path) -> TextIO | None:
    try:
        return open(path, encoding="utf-8")  # noqa: SIM115 - the caller closes it
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"{path}: cannot read it ({exc})") from exc


def read_manifest_head(path: Path) -> Manifest | None:
    """The manifest without its job entries (``jobs`` empty), read from the first line of the
    one-entry-per-line layout (the whole file otherwise)."""
    handle = _open(path)
    if handle is None:
        return None
    with handle:
        try:
            first = handle.readline().rstrip("\n")
        except OSError as exc:
            raise StoreError(f"{path}: cannot read it ({exc})") from exc
    if first.endswith(_JOBS_MARKER):
        try:
            return Manifest.load({**loads(first[: -len(_JOBS_MARKER)] + "}"), "jobs": []}, source=path)
        except (ValueError, StoreError):
            pass
    manifest = read_manifest(path)
    return None if manifest is None else manifest.model_copy(update={"jobs": []})


def manifest_entries(path: Path) -> Iterator[ManifestJob]:
    """The job entries one at a time, each upgraded and validated as it is read; none without a
    manifest.  :class:`StoreError` for an entry that cannot be read."""
    handle = _open(path)
    if handle is None:
        return
    with handle:
        first = handle.readline().rstrip("\n")
        head: dict[str, Any] | None = None
        if first.endswith(_JOBS_MARKER):
            try:
                head = loads(first[: -len(_JOBS_MARKER)] + "}")
            except ValueError:
                head = None
        if isinstance(head, dict):
            version = head.get("schema_version") or 1
            for line in handle:
                if not line.startswith("{"):
                    continue
                try:
                    entry = loads(line.rstrip().rstrip(","))
                    data = {**head, "jobs": [entry]} if version == Manifest.SCHEMA_VERSION else \
                        Manifest.upgrade({**head, "jobs": [entry]})
                    yield ManifestJob.model_validate(data["jobs"][0])
                except (ValueError, KeyError, TypeError) as exc:
                    raise StoreError(f"{path}: a job entry cannot be read ({exc})") from None
            return
    manifest = read_manifest(path)  # an older, indented layout: read whole
    yield from manifest.jobs if manifest is not None else ()


def read_manifest_listing(path: Path) -> tuple[Manifest, list[str]] | None:
    """(the head, as :func:`read_manifest_head`; the job ids, in order), in one pass over the file
    and without building its entries.  None when there is none; :class:`StoreError` when it cannot
    be read."""
    handle = _open(path)
    if handle is None:
        return None
    with handle:
        first = handle.readline().rstrip("\n")
        if first.endswith(_JOBS_MARKER):
            try:
                head = Manifest.load({**loads(first[: -len(_JOBS_MARKER)] + "}"), "jobs": []}, source=path)
                return head, [_entry_id(line) for line in handle if line.startswith("{")]
            except (ValueError, KeyError, TypeError, StoreError):
                pass  # not the streamed layout after all: read it whole
    manifest = read_manifest(path)
    if manifest is None:
        return None
    return manifest.model_copy(update={"jobs": []}), [job.job_id for job in manifest.jobs]


def _entry_id(line: str) -> str:
    """The job id of one manifest entry line; entries start with it, so most need no parsing."""
    prefix = '{"job_id": "'
    if line.startswith(prefix):
        end = line.find('"', len(prefix))
        if end > 0 and "\\" not in line[len(prefix):end]:
            return line[len(prefix):end]
    return str(loads(line.rstrip().rstrip(","))["job_id"])

"""``results_index.jsonl``: every finished job's record in one file, so a resume or a report reads
one file instead of two per job.

Per-job ``results.json`` stays the source of truth.  Each line holds a record and a stamp
(modification time and size) of the job's ``results.json`` and ``job_meta.json`` right after the
driver wrote them; a line is used only while both files still have those times, otherwise the job's own
files are read.  So a torn last line (a kill mid-append), a missing index, a record rewritten by
hand or a ``job_meta.json`` marked ``failed`` by hand all fall back to the files, and the driver
rewrites the index at the end of such a session.  Lines are appended without fsync: losing one
costs a file read, never a wrong answer.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from trace_bench._util.masking import mask_secrets
from trace_bench.store.atomic import write_text
from trace_bench.store.job_store import META_FILE, RESULTS_FILE, JobStore
from trace_bench.store.jsonio import dumps
from trace_bench.store.models import JobResult, JobSpec
from trace_bench.store.status import Status

INDEX_FILE = "results_index.jsonl"
_RECORD = '"record": '
#: where a record's text holds its specification (the last key, see ``JobResult.arrange``)
_SPEC = ', "spec": '
#: keys of a record's text that are its specification's (kept apart by a LazyResult)
_NOT_OWN = frozenset({"spec", *JobResult.VIEWS})


def _stamp(path: str | Path) -> int | None:
    """The file's mtime (ns) and size in one number: an edit within the file system's timestamp
    tick (a few ms) still changes the size in all but freak cases."""
    try:
        stat = os.stat(path)
    except OSError:
        return None
    return stat.st_mtime_ns * 1_000_003 + stat.st_size


class LazyResult:
    """A record kept as the JSON text of its outcome (a fifth of a parsed record's memory, which
    matters at 100,000 jobs) and its frozen specification, an object the driver's plan shares, and
    parsed when something beyond its id and status is read.  The text leaves out what is the
    specification's (``spec`` and the columns computed from it).  Its status is the record's
    ``Status`` (``.successful``, ``.failed``), as a parsed record's is."""

    __slots__ = ("job_id", "status", "_text", "spec")

    def __init__(self, job_id: str, status: str, text: str, spec: JobSpec) -> None:
        self.job_id, self.status, self._text, self.spec = job_id, Status(status), text, spec

    @classmethod
    def of(cls, record: JobResult) -> LazyResult:
        own = {key: value for key, value in record.record().items() if key not in _NOT_OWN}
        return cls(record.job_id, str(record.status), dumps(own, indent=None), record.spec)

    def load(self) -> JobResult:
        return JobResult.model_validate({**json.loads(self._text), "spec": self.spec})

    def objective_names(self) -> list[str]:
        """The keys of ``score_dict_best`` (most records have none: no parse then)."""
        if '"score_dict_best": {}' in self._text:
            return []
        return list(json.loads(self._text).get("score_dict_best") or {})

    def fields(self, names: tuple[str, ...]) -> dict[str, Any]:
        """Several fields as stored (JSON values), with one plain parse."""
        data = json.loads(self._text)
        return {name: data.get(name) for name in names}

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.load(), name)


def loaded(record: JobResult | LazyResult) -> JobResult:
    return record.load() if isinstance(record, LazyResult) else record


@dataclass(frozen=True)
class IndexedResult:
    job_id: str
    status: str
    text: str
    results_stamp: int
    meta_stamp: int | None

    def result(self, spec: JobSpec) -> LazyResult:
        """The line's record, with ``spec``: the specification of the job of this id in the run's
        plan (the job id hashes what identifies it, so the record's own is the same cell; the
        index keeps only the rest, see :meth:`ResultsIndex.read`)."""
        return LazyResult(self.job_id, self.status, self.text, spec)

    def current(self, job: JobStore) -> bool:
        """Whether the job's files are still the ones this line was written from."""
        root = job.root_str
        return (_stamp(f"{root}/{RESULTS_FILE}") == self.results_stamp
                and _stamp(f"{root}/{META_FILE}") == self.meta_stamp)


def _line(job: JobStore, record: JobResult | LazyResult) -> str | None:
    written = _stamp(job.results_path)
    if written is None:
        return None
    text = mask_secrets(dumps(loaded(record).record(), indent=None))
    head = dumps({"job_id": record.job_id, "status": str(record.status), "results_stamp": written,
                  "meta_stamp": _stamp(job.meta_path), "record_chars": len(text)}, indent=None)
    # the record comes last: read() parses only the head, and its length tells a whole line from a torn one
    return f"{head[:-1]}, {_RECORD}{text}}}\n"


class ResultsIndex:
    """Appends and reads the index of one run directory."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def stamp(self) -> int | None:
        """Changes whenever a line is added or the index rewritten."""
        return _stamp(self.path)

    def append(self, job: JobStore, record: JobResult | LazyResult) -> None:
        """After ``job.write_result(record)``: one line for it."""
        line = _line(job, record)
        if line is None:
            return
        with open(self.path, "a", encoding="utf-8") as handle:
            handle.write(line)

    def read(self) -> dict[str, IndexedResult]:
        """Lines by job id (the last line of a job wins); unreadable lines are skipped."""
        entries: dict[str, IndexedResult] = {}
        try:
            handle = open(self.path, encoding="utf-8")  # noqa: SIM115 - closed below
        except OSError:
            return entries
        with handle:
            for text in handle:
                try:
                    at = text.index(_RECORD)  # the record is the line's last field: parse only what precedes
                    head = json.loads(text[:at].rstrip().rstrip(",") + "}")
                    job_id, status = str(head["job_id"]), str(head["status"])
                    start = at + len(_RECORD)
                    end = start + int(head["record_chars"])
                    if len(text) != end + 2 or not text.endswith("}}\n"):
                        continue  # torn (a kill mid-append) or damaged: the job's files answer
                    cut = text.rfind(_SPEC, start, end)  # the specification, last: the plan holds it (one copy)
                    record = text[start:cut] + "}" if cut > 0 else text[start:end]
                    entries[job_id] = IndexedResult(job_id, status, record, int(head["results_stamp"]),
                                                    head.get("meta_stamp"))
                except (ValueError, KeyError, TypeError):
                    continue
        return entries

    def rewrite(self, jobs: dict[str, JobStore], records: dict[str, JobResult | LazyResult]) -> None:
        """Replace the index with one line per record whose files exist (atomic)."""
        lines = [line for job_id, record in records.items() if job_id in jobs
                 for line in [_line(jobs[job_id], record)] if line is not None]
        write_text(self.path, "".join(lines), durable=False, mask=False)

"""The one job-process wrapper, shared by every executor.

Executors run a *job body* they are handed (the runner's, normally); they never import the
runner.  A body is a module-level function ``body(args, job) -> record``: ``args`` is the
JSON-able mapping the runner put in :class:`JobLaunch`, ``job`` the job directory to write, and
the record a JSON-able mapping.  It is handed either as the function (module-level, so that it
pickles by reference into a forked job or a Ray worker) or by name, ``"package.module:function"``,
imported in the job's process only (:func:`resolve_body`): a driver that names its body this way
never imports what the body imports.  :func:`run_job_body` is what every executor calls inside the job's process:
the job's output goes to its ``stdout.log`` (secrets masked), its memory limit is set, and a body
that raises becomes an outcome without a record (the traceback is in ``stdout.log``).
"""

from __future__ import annotations

import contextlib
import importlib
import io
import os
import resource
import sys
import traceback
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

from trace_bench._util.masking import mask_secrets
from trace_bench.store.job_store import JobStore

JobBody = Callable[[dict[str, Any], JobStore], dict[str, Any]] | str


def resolve_body(body: JobBody) -> Callable[[dict[str, Any], JobStore], dict[str, Any]]:
    """The body's function: ``body`` itself, or the function a ``"module:function"`` name names."""
    if callable(body):
        return body
    module, _, name = body.partition(":")
    function: Callable[[dict[str, Any], JobStore], dict[str, Any]] = getattr(importlib.import_module(module), name)
    return function


@dataclass(frozen=True)
class JobLaunch:
    """One job for an executor: where it writes, its limits, and its body's arguments."""

    job_id: str
    job_dir: str
    args: dict[str, Any] = field(default_factory=dict)
    timeout_s: float | None = None
    memory_mb: int | None = None


@dataclass
class Finished:
    """A job process that ended: its record (None when it sent none) and how it ended."""

    job_id: str
    record: dict[str, Any] | None
    exitcode: int | None
    killed_reason: str | None
    wall_s: float
    files: dict[str, bytes] | None = None
    error: str | None = None
    node_id: str | None = None  # the cluster node that ran it (Ray)

    @property
    def lost(self) -> bool:
        """The process ended without a record and nobody killed it (crash, lost worker)."""
        return self.record is None and self.killed_reason is None


class MaskingStream(io.TextIOBase):
    """A text stream to a file descriptor that masks secrets on the way out (unbuffered)."""

    def __init__(self, fd: int) -> None:
        self._fd = fd

    def writable(self) -> bool:
        return True

    def write(self, text: str) -> int:
        if text:
            os.write(self._fd, mask_secrets(text).encode("utf-8", "replace"))
        return len(text)

    def flush(self) -> None:
        pass

    def fileno(self) -> int:
        return self._fd

    def isatty(self) -> bool:
        return False


@contextlib.contextmanager
def job_output(job: JobStore) -> Iterator[None]:
    """File descriptors 1 and 2 (and ``sys.stdout``/``sys.stderr``) go to the job's ``stdout.log``
    until the block ends, then back where they were (a Ray worker outlives its job's block)."""
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    fd = job.open_stdout()
    saved = os.dup(1), os.dup(2)
    streams = sys.stdout, sys.stderr
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stdout, sys.stderr = MaskingStream(1), MaskingStream(2)
    try:
        yield
    finally:
        sys.stdout, sys.stderr = streams
        os.dup2(saved[0], 1)
        os.dup2(saved[1], 2)
        os.close(saved[0])
        os.close(saved[1])


def limit_memory(memory_mb: int | None) -> None:
    """RLIMIT_AS for this process (the job's own process, or a Ray worker that runs one job)."""
    if memory_mb:
        limit = int(memory_mb) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def run_job_body(body: JobBody, launch: JobLaunch, job: JobStore) -> dict[str, Any]:
    """Run ``body`` for ``launch`` in this process, writing into ``job``.

    Returns ``{"record": <the body's record or None>, "error": <why there is none, or None>}``;
    never raises for what the body does.
    """
    job.root.mkdir(parents=True, exist_ok=True)
    with job_output(job):
        try:
            limit_memory(launch.memory_mb)
            return {"record": resolve_body(body)(launch.args, job), "error": None}
        except BaseException as exc:  # the executor records a job without a record as failed/lost
            with contextlib.suppress(Exception):
                sys.stderr.write(traceback.format_exc())
            return {"record": None, "error": f"job body raised {type(exc).__name__}: {exc}"[:500]}

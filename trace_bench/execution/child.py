"""Code that runs inside a job process (and is preloaded into the forkserver template).

Importing this module imports ``opto`` and the trainer stack once, in the template process, so
every forked job starts warm.  ``litellm``/``openai`` stay deferred until a real call needs them.
"""

from __future__ import annotations

import contextlib
import gc
import io
import os
import resource
import signal
import sys
import traceback
from typing import Any

from trace_bench.compat import fast_inspect
from trace_bench.runtime import configure_environment

configure_environment()
fast_inspect.install()

with contextlib.redirect_stdout(io.StringIO()):  # opto prints its backend choice on import
    import opto.optimizers  # noqa: E402,F401 - warm the template process
    from opto import trace  # noqa: E402,F401
try:
    import numpy  # noqa: E402,F401 - most tasks and the job seeding use it
    import numpy.random  # noqa: E402,F401
except ImportError:  # pragma: no cover
    pass

import trace_bench.llm.current  # noqa: E402,F401
import trace_bench.llm.factory  # noqa: E402,F401
import trace_bench.llm.limiter  # noqa: E402,F401
import trace_bench.runner.measure  # noqa: E402,F401
import trace_bench.runner.problem_loader  # noqa: E402,F401
import trace_bench.tasks.problem  # noqa: E402,F401
import trace_bench.trainers.context  # noqa: E402,F401
from trace_bench.registry.trainers import all_trainers  # noqa: E402
from trace_bench.runner.job import prepare_process  # noqa: E402


def _preload_trainers() -> None:
    """Import every trainer class (not its library) once here, so that a forked job resolves its
    trainer without importing modules or scanning entry points (~150 ms per job otherwise)."""
    try:
        prepare_process()  # what every job does first; idempotent
        all_trainers()
        from trace_bench.trainers.opto_native import warm

        warm()  # opto's own trainers (OpenTrace 0.2.x): their module and knobs, once
    except Exception:  # pragma: no cover - a job reports the real error when it resolves its trainer
        all_trainers.cache_clear()


_preload_trainers()
# Everything loaded so far lives as long as the template: move it out of the collector's reach so
# that a forked job's garbage collections do not touch (and copy-on-write) the shared pages.
gc.collect()
gc.freeze()
from trace_bench.store.masking import mask_secrets  # noqa: E402


class MaskingStream(io.TextIOBase):
    """A line-buffered text stream to the job's stdout.log that masks secrets on the way out."""

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


def _limit_memory(memory_mb: int | None) -> None:
    if memory_mb:
        limit = int(memory_mb) * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))


def die_with_parent() -> None:
    """Linux: SIGKILL this process when its parent (the job template) exits.

    The template exits when the driver dies, so a killed driver never leaves job processes
    writing into a run directory that a later ``--resume`` is about to reuse.
    """
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        pr_set_pdeathsig = 1
        libc.prctl(pr_set_pdeathsig, signal.SIGKILL, 0, 0, 0)
    except (OSError, AttributeError):  # pragma: no cover - not Linux
        return
    if os.getppid() == 1:  # the parent died before prctl took effect
        os._exit(1)


def job_process_main(payload: dict[str, Any], conn: Any) -> None:
    """Entry point of a job process: isolate, redirect output, run the job, send the record."""
    from trace_bench.matrix.expand import JobSpec
    from trace_bench.runner.job import run_job
    from trace_bench.store.run_dir import JobPaths

    die_with_parent()
    os.setpgrp()  # own process group: a timeout kills the job and everything it started
    paths = JobPaths(__import__("pathlib").Path(payload["job_dir"]))
    paths.root.mkdir(parents=True, exist_ok=True)
    fd = os.open(paths.stdout, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(fd, 1)
    os.dup2(fd, 2)
    os.close(fd)
    sys.stdout = MaskingStream(1)  # type: ignore[assignment]
    sys.stderr = MaskingStream(2)  # type: ignore[assignment]
    try:
        _limit_memory(payload.get("memory_mb"))
        spec = JobSpec(**payload["spec"])
        record = run_job(spec, paths, run_id=payload["run_id"], carried=payload.get("carried"),
                         attempt=payload.get("attempt", 1))
        conn.send(record.model_dump(mode="json"))
    except BaseException:  # the parent turns a missing record into a failed job
        try:
            sys.stderr.write(traceback.format_exc())
        except Exception:
            pass
    finally:
        try:
            conn.close()
        except Exception:
            pass
        os._exit(0)

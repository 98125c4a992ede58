"""Defaults that depend on more than one key, resolved once for every entry point (CLI, ``BenchRunner``)."""

from __future__ import annotations

from typing import Protocol

#: The original Trace-Bench's per-job wall-clock limit in real mode; stub jobs are unlimited.
REAL_MODE_JOB_TIMEOUT_S = 600.0


class _TimedConfig(Protocol):
    @property
    def mode(self) -> str: ...

    @property
    def job_timeout(self) -> float | None: ...


def effective_job_timeout(config: _TimedConfig, override: float | None = None) -> float | None:
    """A job's wall-clock limit in seconds, or None for none: ``override`` (``--job-timeout``,
    ``BenchRunner(job_timeout=...)``), else the config's ``job_timeout``, else 600 s in real mode.
    0 means no limit."""
    value = override if override is not None else config.job_timeout
    if value is None and config.mode == "real":
        value = REAL_MODE_JOB_TIMEOUT_S
    return value or None

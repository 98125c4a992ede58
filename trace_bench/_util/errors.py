"""The root of trace-bench's errors, and config errors that a user can fix: file, key path,
reason and a suggestion.

An error renders as one line whatever it quotes: newlines are flattened and every part is
shortened with an ellipsis, so a 200 KB task id or a binary blob cannot flood a terminal.  An
error about a command-line flag (a key path starting with ``--``) names the flag, never a file.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable
from typing import ClassVar

_PART_LIMIT = 500
_HINT_LIMIT = 1000  # lists of valid names (knobs, choices) are worth showing whole


def shorten(text: str, limit: int = _PART_LIMIT) -> str:
    """``text`` on one line, cut in the middle with an ellipsis when longer than ``limit``."""
    flat = " ".join(str(text).replace("\r", "\n").split("\n"))
    if len(flat) <= limit:
        return flat
    keep = max(limit - 1, 2)
    return f"{flat[:keep * 2 // 3]}…{flat[-(keep - keep * 2 // 3):]}"


def is_flag(key_path: str | None) -> bool:
    return bool(key_path) and str(key_path).startswith("--")


class TraceBenchError(Exception):
    """The root of every exception trace-bench defines (optuna's ``OptunaError``): ``except
    TraceBenchError`` catches ours and nothing of a library's or of a task author's.

    Each subclass keeps the built-in base it always had (``ValueError``, ``RuntimeError``,
    ``OSError``, ...), so code that catches those still does.  One class stands outside the root on
    purpose: ``trace_bench.llm.errors.BudgetExhausted``, a stop signal that derives from
    ``BaseException`` so that a library's ``except Exception`` cannot swallow it.

    ``job_status`` is the status a job ends with when this error ends it (``infra_error`` for a
    task's infrastructure, ``failed`` where this machine cannot run the task, ...); None leaves it
    to the phase the job was in.  A task author's own exception may declare the same attribute:
    the job body reads it in one place (``trace_bench.runner.job.failures``).
    """

    job_status: ClassVar[str | None] = None


class ConfigError(TraceBenchError, ValueError):
    """A config (or command-line) problem; the CLI prints it on one line and exits with code 2."""

    def __init__(self, reason: str, *, file: str | None = None, key_path: str | None = None, hint: str | None = None):
        self.reason = reason
        self.file = file
        self.key_path = key_path
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        parts = [shorten(p) for p in (self.file, self.key_path) if p]
        parts.append(shorten(self.reason))
        message = ": ".join(parts)
        if self.hint:
            message += f" ({shorten(self.hint, _HINT_LIMIT)})"
        return message

    def with_file(self, file: str | None) -> ConfigError:
        """The same error attributed to ``file`` (left alone for errors about a flag)."""
        if not file or is_flag(self.key_path):
            return self
        return ConfigError(self.reason, file=file, key_path=self.key_path, hint=self.hint)


def did_you_mean(name: str, choices: Iterable[str]) -> str | None:
    """``"did you mean 'x'?"`` for the closest valid name, or None when nothing is close."""
    choices = list(choices)
    if len(name) > 200:  # nothing valid is that long, and difflib is quadratic
        return None
    lowered = {c.lower(): c for c in choices}
    if name.lower() in lowered:
        return f"did you mean '{lowered[name.lower()]}'?"
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    if not close:
        close = [lowered[m] for m in difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)]
    return f"did you mean '{close[0]}'?" if close else None

"""Config errors that a user can fix: file, key path, reason and a suggestion."""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class ConfigError(ValueError):
    """A config problem; the CLI prints it and exits with code 2."""

    def __init__(self, reason: str, *, file: str | None = None, key_path: str | None = None, hint: str | None = None):
        self.reason = reason
        self.file = file
        self.key_path = key_path
        self.hint = hint
        super().__init__(self.render())

    def render(self) -> str:
        where = self.file or "<config>"
        if self.key_path:
            where = f"{where}: {self.key_path}"
        message = f"{where}: {self.reason}"
        if self.hint:
            message += f" ({self.hint})"
        return message

    def with_file(self, file: str) -> ConfigError:
        return ConfigError(self.reason, file=file, key_path=self.key_path, hint=self.hint)


def did_you_mean(name: str, choices: Iterable[str]) -> str | None:
    """``"did you mean 'x'?"`` for the closest valid name, or None when nothing is close."""
    choices = list(choices)
    lowered = {c.lower(): c for c in choices}
    if name.lower() in lowered:
        return f"did you mean '{lowered[name.lower()]}'?"
    close = difflib.get_close_matches(name, choices, n=1, cutoff=0.6)
    if not close:
        close = [lowered[m] for m in difflib.get_close_matches(name.lower(), list(lowered), n=1, cutoff=0.6)]
    return f"did you mean '{close[0]}'?" if close else None

"""What Ray itself logged, attached to a failed Ray run's assertion.

A Ray run that fails in CI leaves its reasons in the session's logs on a machine nobody can log
into afterwards ("worker lost" says only that an actor died): the warnings and errors of the
raylet and the GCS say whether a node was declared dead, a worker was OOM-killed or never
registered."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path
from typing import Any

from tests.conftest import run_cli

_SESSION = Path("/tmp/ray/session_latest/logs")
_NOTABLE = re.compile(r"^\[[^\]]* [WEF] \d+ \d+\]|SIGKILL|memory|[Kk]ill")


def ray_log_excerpt(lines: int = 60) -> str:
    """The last ``lines`` warnings, errors and kills of the latest local Ray session."""
    found: list[str] = []
    for name in ("gcs_server.out", "raylet.out", "raylet.err"):
        try:
            text = (_SESSION / name).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        found += [f"{name}: {line}" for line in text.splitlines()
                  if _NOTABLE.search(line) and "state-dump" not in line]
    return "\n".join(found[-lines:]) or "(no Ray session log found)"


def run_ray_cli(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    """``run_cli`` that, when the command fails, says what Ray logged."""
    proc = run_cli(*args, **kwargs)
    if proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}\nstdout:\n{proc.stdout}\nstderr:\n{proc.stderr}\n"
                             f"Ray's own log:\n{ray_log_excerpt()}")
    return proc

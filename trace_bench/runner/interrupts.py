"""Ctrl-C and SIGTERM for a run: the first SIGINT stops scheduling and lets running jobs finish,
a second one (or SIGTERM) kills them.  The run stays resumable either way.

Installed before anything slow happens (creating the run, expanding the matrix, starting the job
template), so that a signal arriving early is a clean interrupt, not a traceback.
"""

from __future__ import annotations

import signal
import sys
import threading
from collections.abc import Callable
from typing import Any


class InterruptHandler:
    """Counts interrupts while installed (main thread only); restores the previous handlers."""

    def __init__(self, notify: Callable[[str], None] | None = None, quiet: bool = False) -> None:
        self.count = 0
        self.notify = notify
        self.quiet = quiet
        self._previous: dict[int, Any] = {}

    def __enter__(self) -> InterruptHandler:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._previous[sig] = signal.signal(sig, self._handle)
        return self

    @property
    def stop_scheduling(self) -> bool:
        return self.count >= 1

    @property
    def kill_running(self) -> bool:
        return self.count >= 2

    def _handle(self, signum: int, frame: Any) -> None:
        self.count += 1 if signum == signal.SIGINT else 2
        if self.count == 1:
            self._say("interrupt: no new jobs will start; running jobs finish (Ctrl-C again to kill them)")
        else:
            self._say("interrupt: killing running jobs; resume later with --resume")

    def _say(self, text: str) -> None:
        if self.notify is not None:
            self.notify(text)
        elif not self.quiet:
            print(text, file=sys.stderr, flush=True)

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self._previous.items():
            signal.signal(sig, handler)
        self._previous.clear()

"""Console progress for ``trace-bench run``: one plain line per finished job (TTY or not)."""

from __future__ import annotations

import sys
from typing import TextIO

from trace_bench.store.schemas import JobResult


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.4g}"


class ConsoleProgress:
    def __init__(self, total: int, stream: TextIO | None = None, quiet: bool = False) -> None:
        self.total = total
        self.done = 0
        self.stream = stream or sys.stderr
        self.quiet = quiet

    def line(self, text: str) -> None:
        if not self.quiet:
            print(text, file=self.stream, flush=True)

    def finished(self, record: JobResult) -> None:
        self.done += 1
        extra = f" error={record.error[:120]}" if record.error else ""
        self.line(
            f"[{self.done}/{self.total}] {record.status:<16} {record.task} x {record.trainer}"
            f" ({record.params_label}) seed={record.seed} initial={_fmt(record.score_initial)}"
            f" best={_fmt(record.score_best)} calls={record.llm_calls} {record.time_seconds:.2f}s{extra}"
        )

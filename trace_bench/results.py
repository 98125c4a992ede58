"""The original Trace-Bench's ``trace_bench.results`` (result rows and its leaderboard helper);
see :mod:`trace_bench.legacy.results` and docs/coming-from-original.md."""

from __future__ import annotations

from trace_bench.legacy.results import LEADERBOARD_COLUMNS, LEGACY_COLUMNS, build_leaderboard_rows, legacy_row

RESULT_COLUMNS = LEGACY_COLUMNS

__all__ = ["LEADERBOARD_COLUMNS", "LEGACY_COLUMNS", "RESULT_COLUMNS", "build_leaderboard_rows", "legacy_row"]

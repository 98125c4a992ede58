"""The traced concatenation op used to batch rollouts (kept in a real source file: ``bundle``
reads the function's source)."""

from __future__ import annotations

from typing import Any


def make_batchify() -> Any:
    from opto import trace

    @trace.bundle()
    def batchify(*items: Any) -> str:
        """Concatenate the outputs of a minibatch, one line per example, tagged by example id."""
        return "\n".join(f"ID [{i}]: {item}" for i, item in enumerate(items))

    return batchify

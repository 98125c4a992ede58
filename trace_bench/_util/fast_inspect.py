"""A cheap ``inspect.stack`` for job processes.

``opto``'s ``bundle()`` decorator calls ``inspect.stack()`` only to read the caller's
``f_locals``.  The standard implementation resolves the source file and module of every frame
(``inspect.getmodule`` scans all of ``sys.modules`` each time), which makes ``import opto.trace``
take over a second and every bundle created in a job cost milliseconds.  Job processes replace
it with a version that builds the same ``FrameInfo`` records without reading source
(``code_context`` is None, as with ``inspect.stack(context=0)``).  The driver never imports this.
"""

from __future__ import annotations

import inspect
import sys
from types import FrameType
from typing import Any


def fast_stack(context: int = 1) -> list[Any]:
    frame: FrameType | None = sys._getframe(1)
    records = []
    while frame is not None:
        code = frame.f_code
        try:
            record = inspect.FrameInfo(frame, code.co_filename, frame.f_lineno, code.co_name, None, None,
                                       positions=None)  # type: ignore[call-arg]
        except TypeError:  # Python 3.10: a plain namedtuple without positions
            record = inspect.FrameInfo(frame, code.co_filename, frame.f_lineno, code.co_name, None, None)
        records.append(record)
        frame = frame.f_back
    return records


def install() -> None:
    inspect.stack = fast_stack

"""Strict JSON for every file of a run directory.

Python's ``json`` writes ``NaN`` and ``Infinity`` by default, which are not JSON: other tools
(``jq``, browsers, most JSON libraries) refuse such a file.  Everything the store writes goes
through :func:`dumps`, which uses ``allow_nan=False`` and turns each non-finite float into
``null`` first.  Where a missing number must be told apart from an invalid one, the record says
so itself (``JobResult.non_finite``).  :func:`loads` still accepts ``NaN`` so that files written
by version 1 of the store, which allowed it, load.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any


def finite(value: Any) -> Any:
    """``value`` with every non-finite float (at any depth) replaced by ``None``."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {key: finite(inner) for key, inner in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(inner) for inner in value]
    return value


def _plain(value: Any) -> Any:
    """What ``json`` cannot encode itself: paths, sets, pydantic models, numpy scalars."""
    if isinstance(value, Path):
        return str(value)
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    model_dump = getattr(value, "model_dump", None)
    if callable(model_dump):
        return finite(model_dump(mode="json"))
    item = getattr(value, "item", None)
    if callable(item):
        try:
            return finite(item())
        except Exception:  # noqa: BLE001 - anything unencodable is named, never raised
            pass
    return f"<{type(value).__name__}>"


def dumps(data: Any, *, indent: int | None = 2) -> str:
    """Strict JSON text (no ``NaN``/``Infinity``); the fast path when ``data`` is already finite."""
    separators = None if indent is not None else (", ", ": ")
    try:
        return json.dumps(data, indent=indent, separators=separators, default=_plain, allow_nan=False)
    except ValueError:
        return json.dumps(finite(data), indent=indent, separators=separators, default=_plain, allow_nan=False)


def listing_chunks(head: dict[str, Any], key: str, items: Iterable[Any], *, batch: int = 512,
                   raw: bool = False) -> Iterator[str]:
    """``head`` with ``key`` set to the list ``items``, as JSON text in chunks: the head's fields
    on one line, then one item per line.  Each item goes through the C encoder (an indented dump
    goes through the pure-Python one, ~10x slower), so a 100,000-entry list streams in a second,
    and a human still reads one entry per line.  ``raw``: the items are already JSON text."""
    fields = dumps({k: v for k, v in head.items() if k != key}, indent=None)
    yield (fields[:-1] + ", " if fields != "{}" else "{") + json.dumps(key) + ": ["
    lines: list[str] = []
    first = True
    for item in items:
        lines.append(("\n" if first else ",\n") + (item if raw else dumps(item, indent=None)))
        first = False
        if len(lines) >= batch:
            yield "".join(lines)
            lines = []
    yield "".join(lines) + ("\n]}\n" if not first else "]}\n")


def plain(value: Any) -> Any:
    """``value`` as plain JSON data, as a file would hold it (objects become ``"<ClassName>"``,
    never a repr that carries a memory address)."""
    return json.loads(dumps(value, indent=None))


def loads(text: str | bytes) -> Any:
    """Parse JSON; ``NaN``/``Infinity`` of version-1 files are read as floats (records null them)."""
    return json.loads(text)

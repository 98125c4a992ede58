"""Rendering rows as TSV, an aligned table, or JSON."""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any


def render(rows: Sequence[dict[str, Any]], columns: Sequence[str], fmt: str, tsv_columns: Sequence[str]) -> str:
    if fmt == "json":
        return json.dumps(list(rows), indent=2, default=str)
    if fmt == "table":
        header = list(columns)
        cells = [[str(row.get(c, "") if row.get(c) is not None else "") for c in header] for row in rows]
        widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(header)]
        lines = ["  ".join(h.upper().ljust(w) for h, w in zip(header, widths, strict=True)).rstrip()]
        lines += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
        return "\n".join(lines)
    out = []
    for row in rows:
        parts = [str(row.get(c)) for c in tsv_columns if row.get(c) not in (None, "")]
        out.append("\t".join(parts))
    return "\n".join(out)

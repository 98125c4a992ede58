"""Reading a built-in catalogue file (trainers/catalog.json, tasks/suites.json) into frozen rows.

Both catalogues are read as files, not by importing the packages they describe: listing and the job
template's preloads must stay cheap.  Keys a row's dataclass does not declare are ignored (a newer
file read by older code), and lists become tuples so the rows stay hashable.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

Row = TypeVar("Row", bound="DataclassInstance")


def read_rows(path: Path, row_type: type[Row]) -> tuple[Row, ...]:
    """The rows of the JSON list at ``path``, each built as ``row_type`` (a dataclass)."""
    fields = {f.name for f in dataclasses.fields(row_type)}
    rows: list[dict[str, Any]] = json.loads(path.read_text(encoding="utf-8"))
    return tuple(row_type(**{key: tuple(value) if isinstance(value, list) else value
                             for key, value in row.items() if key in fields}) for row in rows)

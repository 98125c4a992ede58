"""results.csv's columns, their order and their types, all derived from the job record.

:data:`RESULT_COLUMNS` is computed from :class:`~trace_bench.store.models.JobResult` (and the
specification it embeds), never listed by hand: a field added to the record is a column, typed by
its annotation, with no second edit (the model's docstring says how a field opts out).  Writers
render a record's row with :func:`result_row`; readers get typed values back with
:func:`typed_rows` instead of re-typing strings, so results.csv, the analysis frames, the UI's
tables and the CLI agree on one schema (inspect_ai's columns follow its log model the same way).

A cell is empty for a null; floats are written with ``repr`` (exact round trip); booleans as
``true``/``false``; mappings and lists as sorted-key JSON.
"""

from __future__ import annotations

import json
import math
import types
import typing
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Literal

from trace_bench.store.legacy_columns import legacy_values
from trace_bench.store.models import (
    LEGACY_CSV_COLUMNS,
    OBJECTIVE_PREFIX,
    JobResult,
    JobSpec,
    StoreError,
)
from trace_bench.store.models.job import record_columns

Kind = Literal["str", "int", "float", "bool", "json", "timestamp"]


@dataclass(frozen=True)
class Column:
    """One results.csv column: its name, how its cells are typed, and whether every row has a
    value (a null in a ``required`` column is a damaged file)."""

    name: str
    kind: Kind
    required: bool = False


def kind_of(annotation: Any, extra: Any = None) -> Kind:
    """How a value of ``annotation`` is typed in a table (``extra``: a field's ``json_schema_extra``,
    whose ``kind`` wins)."""
    if isinstance(extra, dict) and extra.get("kind"):
        return typing.cast(Kind, extra["kind"])
    args = [a for a in typing.get_args(annotation) if a is not type(None)]
    if typing.get_origin(annotation) in (typing.Union, types.UnionType) and len(args) == 1:
        annotation = args[0]
    origin = typing.get_origin(annotation) or annotation
    if origin is bool:
        return "bool"
    if origin is int:
        return "int"
    if origin is float:
        return "float"
    if origin in (dict, list, tuple):
        return "json"
    return "str"


def result_columns(model: type[JobResult] = JobResult) -> tuple[Column, ...]:
    """The typed results.csv columns of a record model (``record_columns`` order)."""
    fields = {**JobSpec.model_fields, **model.model_fields}
    derived: dict[str, Kind] = {"optimizer": "str", "llm_model": "str"}
    out = []
    for name in record_columns(model):
        info = fields.get(name)
        if info is None:
            out.append(Column(name, derived.get(name, "str")))
        else:
            out.append(Column(name, kind_of(info.annotation, info.json_schema_extra), info.is_required()))
    return tuple(out)


#: our columns, in order, typed from the record's annotations
RESULT_COLUMNS: tuple[Column, ...] = result_columns()
#: the original Trace-Bench's columns appended after ours (see ``legacy_columns``)
ORIGINAL_COLUMNS: tuple[Column, ...] = tuple(
    Column(name, "json" if name.endswith("kwargs") else "float" if name.startswith("score_val") else "str")
    for name in LEGACY_CSV_COLUMNS)
_BY_NAME = {column.name: column for column in (*RESULT_COLUMNS, *ORIGINAL_COLUMNS)}


def column(name: str) -> Column:
    """The column called ``name`` (an ``obj_<metric>`` column is a float; an unknown one is text)."""
    found = _BY_NAME.get(name)
    if found is not None:
        return found
    return Column(name, "float" if name.startswith(OBJECTIVE_PREFIX) else "str")


def objective_columns(records: Iterable[Any]) -> list[str]:
    """The ``obj_<metric>`` columns of a set of records (their objectives beyond ``score``), sorted."""
    names = {name for record in records for name in record.objective_names()} - {"score"}
    return [OBJECTIVE_PREFIX + name for name in sorted(names)]


def header(objectives: Sequence[str]) -> list[str]:
    return [*(c.name for c in RESULT_COLUMNS), *objectives, *(c.name for c in ORIGINAL_COLUMNS)]


def cell(value: Any) -> Any:
    """A value as results.csv writes it."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return repr(value) if math.isfinite(value) else ""
    if isinstance(value, (dict, list)):
        return json.dumps(value, sort_keys=True, default=str)
    if isinstance(value, Enum):
        return value.value
    return value


def result_row(record: JobResult, objectives: Sequence[str]) -> list[Any]:
    """``record``'s row: our columns, its objectives, the original's columns."""
    data = record.columns()
    row = [cell(data[c.name]) for c in RESULT_COLUMNS]
    row += [cell(record.score_dict_best.get(name[len(OBJECTIVE_PREFIX):])) for name in objectives]
    original = legacy_values(record)
    return row + [cell(original[c.name]) for c in ORIGINAL_COLUMNS]


_TRUE = ("true", "1", "yes")


def typed(kind: Kind, text: str) -> Any:
    """A cell's value (None for an empty cell); ValueError when the text is not of its kind."""
    if text == "" or (kind in ("float", "int") and text.lower() == "nan"):
        return None
    if kind == "float":
        return float(text)
    if kind == "int":
        number = float(text)
        return int(number) if number.is_integer() else number
    if kind == "bool":
        return text.lower() in _TRUE
    if kind == "json":
        try:
            return json.loads(text)
        except ValueError:
            return text
    return text


def typed_rows(head: Sequence[str], rows: Iterable[Sequence[str]], *, source: object = "results.csv",
               original: bool = True) -> tuple[list[Column], list[list[Any]]]:
    """The columns of a results.csv (ours in our order, then any other column of the file, an
    older run's missing ones present and empty) and its rows typed by them; ``original=False``
    leaves out the original Trace-Bench's columns.  A results.csv written before
    ``score_test_best`` existed has it read from ``score_test`` (the same score then)."""
    present = {name: i for i, name in enumerate(head)}
    skip = {c.name for c in RESULT_COLUMNS} | (set() if original else {c.name for c in ORIGINAL_COLUMNS})
    columns = [*RESULT_COLUMNS, *(column(n) for n in head if n not in skip)]
    legacy_test = "score_test_best" not in present and "score_test" in present
    out: list[list[Any]] = []
    for line, row in enumerate(rows, start=2):
        values: list[Any] = []
        for col in columns:
            index = present.get("score_test" if legacy_test and col.name == "score_test_best" else col.name)
            text = row[index] if index is not None and index < len(row) else ""
            try:
                values.append(typed(col.kind, text))
            except ValueError:
                raise StoreError(f"{source}: line {line}: {col.name} {text!r} is not {_ARTICLE[col.kind]}") from None
        out.append(values)
    return columns, out


_ARTICLE = {"int": "an integer", "float": "a number", "bool": "a boolean", "json": "JSON", "str": "text",
            "timestamp": "a timestamp"}

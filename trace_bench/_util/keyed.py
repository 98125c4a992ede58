"""A typed record that still reads like the mapping it replaced.

A job's LLM identity and its spend were dictionaries before they were models; code written against
them (plugins, notebooks, the original Trace-Bench's callers) reads them by key.  A model built on
:class:`KeyedModel` answers ``record["key"]``, ``record.get("key")``, ``record.keys()``,
``dict(record)`` and ``record == {...}`` from the mapping it is written as (its JSON-ready dump,
custom serializers applied), so those readers see exactly the keys the file holds; typed code reads
its attributes.  Read-only: the record is changed, where at all, through its fields.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel


class KeyedModel(BaseModel):
    """A model readable by key (see the module docstring)."""

    def _keyed(self) -> dict[str, Any]:
        data: dict[str, Any] = self.model_dump()
        return data

    def __getitem__(self, key: str) -> Any:
        return self._keyed()[key]

    def get(self, key: str, default: Any = None) -> Any:
        return self._keyed().get(key, default)

    def keys(self) -> list[str]:
        return list(self._keyed())

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Mapping):
            return self._keyed() == dict(other)
        return super().__eq__(other)


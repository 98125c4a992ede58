"""The base of every record of a run directory: a versioned pydantic model.

Every model carries ``schema_version``.  A record built in code gets the current version; a
record read from disk keeps the version it was written with until :meth:`StoreModel.load`
upgrades it, one version at a time, through the model's ``UPGRADES``.  Files without the key
were written before the store versioned them and count as version 1.

How to change a record (say ``JobResult`` gains a column):

1. add the field with a default, so older files still validate;
2. bump ``SCHEMA_VERSION``;
3. only when an older file needs a computed value for the new field, add
   ``UPGRADES[old_version] = function(dict) -> dict`` (a missing step passes the data through);
4. regenerate the JSON Schemas (``python -m trace_bench.store.schema_export``) and update
   docs/artifacts.md.

A file written by a newer trace-bench (higher version) is refused with :class:`NewerSchemaError`;
an old file that cannot be upgraded raises :class:`UpgradeError` from its upgrade step.  Unknown
keys are kept (``extra="allow"``), so a newer writer's optional additions survive a round trip.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, TypeVar

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

Upgrade = Callable[[dict[str, Any]], dict[str, Any]]
Model = TypeVar("Model", bound="StoreModel")


class StoreError(ValueError):
    """A run-directory file that cannot be read as its record; the message names the file."""


class NewerSchemaError(StoreError):
    """The file was written by a newer trace-bench than this one."""


class UpgradeError(StoreError):
    """An old file whose shape cannot be carried to the current version; the message says what to do."""


def _version_in_schema(schema: dict[str, Any], model: type[BaseModel]) -> None:
    """In the exported JSON Schema, ``schema_version`` is the version this code writes."""
    prop = schema.get("properties", {}).get("schema_version")
    version = getattr(model, "SCHEMA_VERSION", None)
    if isinstance(prop, dict) and isinstance(version, int):
        prop.update({"const": version, "default": version})


class StoreModel(BaseModel):
    """A record of a run directory (``SCHEMA_VERSION`` is the version this code writes)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True,
                              json_schema_extra=_version_in_schema)

    SCHEMA_VERSION: ClassVar[int] = 1
    UPGRADES: ClassVar[dict[int, Upgrade]] = {}
    #: The file name a record is exported under in docs/schemas/ (and found by in messages).
    FILE: ClassVar[str] = ""

    schema_version: int = Field(default=0, description="version of this record's shape; readers upgrade older ones")

    @model_validator(mode="before")
    @classmethod
    def _current_version(cls, data: Any) -> Any:
        if isinstance(data, dict):
            version = data.get("schema_version")
            if not version:
                return {**data, "schema_version": cls.SCHEMA_VERSION}
            if version != cls.SCHEMA_VERSION:
                return cls.upgrade(data)
        return data

    @classmethod
    def upgrade(cls, data: dict[str, Any]) -> dict[str, Any]:
        """``data`` carried from its ``schema_version`` to the current one (a copy)."""
        version = data.get("schema_version") or 1
        if not isinstance(version, int) or version < 1:
            raise UpgradeError(f"schema_version {version!r} is not a positive integer")
        if version > cls.SCHEMA_VERSION:
            raise NewerSchemaError(f"schema_version {version} is newer than this trace-bench reads "
                                   f"({cls.__name__} version {cls.SCHEMA_VERSION}); upgrade trace-bench")
        data = dict(data)
        while version < cls.SCHEMA_VERSION:
            step = cls.UPGRADES.get(version)
            if step is not None:
                data = step(data)
            version += 1
        data["schema_version"] = cls.SCHEMA_VERSION
        return data

    @classmethod
    def load(cls: type[Model], data: Any, *, source: object = "") -> Model:
        """Validate a record read from disk (``source`` names the file in error messages).

        A mapping without ``schema_version`` is a version-1 file.  Raises :class:`StoreError`
        (or a subclass) with the file and the problem; never a bare ``ValidationError``.
        """
        where = f"{source}: " if source else ""
        if not isinstance(data, dict):
            raise StoreError(f"{where}expected a JSON object, found {type(data).__name__}")
        try:
            data = cls.upgrade({**data, "schema_version": data.get("schema_version") or 1})
        except StoreError as exc:
            raise type(exc)(f"{where}{exc}") from None
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first.get("loc", ())) or "(record)"
            raise StoreError(f"{where}not a valid {cls.__name__} ({field}: {first.get('msg')})") from None

    def record(self) -> dict[str, Any]:
        """The JSON-ready mapping written to disk (enums as their values, every field present)."""
        return self.model_dump(mode="json")

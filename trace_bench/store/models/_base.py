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

A record may *embed* another model (``JobMeta`` embeds the job's ``JobSpec``): a field that holds
it, declared once.  ``FLAT`` names the embedded fields whose keys the file keeps at its top level
(with a prefix: ``resolved_`` for a ``Resolution``), so the flat files of earlier versions keep
their layout; ``VIEWS`` names keys the file shows for its readers that are computed from the
record (never read back).

Records only the driver or the analysis commands write (the manifest, summary, env, git and files
index, the race, the leaderboard, job_meta.json, attempts.json, the run's own events) and the
config's run-level blocks declare ``defer_build=True``: pydantic builds their validators at their
first use.  The job template is forked from the driver once these modules are imported
(:mod:`trace_bench.execution.forked_template`), so what jobs write is built once, before the fork,
and the driver's own records after it, while the template imports ``opto``.  A record a job
writes stays built at import: a deferred one would be built again in every job
(tests/runner/test_lean_start.py checks a stub job builds none).

A file written by a newer trace-bench (higher version) is refused with :class:`NewerSchemaError`;
an old file that cannot be upgraded raises :class:`UpgradeError` from its upgrade step.  Unknown
keys are kept (``extra="allow"``), so a newer writer's optional additions survive a round trip.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    SerializerFunctionWrapHandler,
    ValidationError,
    model_serializer,
    model_validator,
)

from trace_bench._util.entry_points import skip_empty_pydantic_plugin_scan
from trace_bench._util.errors import TraceBenchError

if TYPE_CHECKING:
    from pydantic import GetJsonSchemaHandler
    from pydantic.json_schema import JsonSchemaValue
    from pydantic_core import CoreSchema

skip_empty_pydantic_plugin_scan()  # before the first model: pydantic looks for plugins there

Upgrade = Callable[[dict[str, Any]], dict[str, Any]]
Model = TypeVar("Model", bound="StoreModel")


class StoreError(TraceBenchError, ValueError):
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


class FlatRecord(BaseModel):
    """A record whose embedded models (``FLAT``: field -> key prefix) are written at its file's top
    level, and which shows computed keys to readers (``VIEWS``, dropped when read back)."""

    model_config = ConfigDict(extra="allow")

    FLAT: ClassVar[dict[str, str]] = {}
    VIEWS: ClassVar[tuple[str, ...]] = ()

    @model_validator(mode="before")
    @classmethod
    def _prepare_input(cls, data: Any) -> Any:
        return cls.prepare(data) if isinstance(data, dict) else data

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        """The mapping a record is validated from (a file's, or keyword arguments)."""
        return gather_flat(cls, data) if cls.FLAT or cls.VIEWS else data

    @model_serializer(mode="wrap")
    def _spread_flat(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        data: dict[str, Any] = handler(self)
        if not self.FLAT and not self.VIEWS:
            return data
        out: dict[str, Any] = {}
        for key, value in data.items():
            prefix = self.FLAT.get(key)
            if prefix is not None and isinstance(value, dict):
                out.update({prefix + name: inner for name, inner in value.items()})
            else:
                out[key] = value
        return self.arrange(out, data)

    def arrange(self, flat: dict[str, Any], nested: dict[str, Any]) -> dict[str, Any]:
        """The file's keys in their order, ``VIEWS`` added (``nested``: the embedded fields as
        mappings); the default keeps the fields' order."""
        return flat

    def view(self, name: str) -> Any:
        """The value of a key the file shows that is no field (``VIEWS``); KeyError otherwise."""
        raise KeyError(name)

    if not TYPE_CHECKING:  # typed code reads ``record.spec.task``; the file's flat names still answer
        def __getattr__(self, name: str) -> Any:
            if not name.startswith("_"):
                for field_name, keys in flat_keys(type(self)).items():
                    for key, inner in keys:
                        if key == name:
                            return getattr(getattr(self, field_name), inner)
                try:
                    return self.view(name)
                except KeyError:
                    pass
            return super().__getattr__(name)

    @classmethod
    def __get_pydantic_json_schema__(cls, core_schema: CoreSchema, handler: GetJsonSchemaHandler) -> JsonSchemaValue:
        """The schema of the file's layout: a ``FLAT`` field's properties at the top level."""
        json_schema = handler(core_schema)
        target = handler.resolve_ref_schema(json_schema)
        properties = target.get("properties")
        if not (cls.FLAT or cls.VIEWS) or not isinstance(properties, dict):
            return json_schema
        required = list(target.get("required", []))
        spread: dict[str, Any] = {}
        for key, value in properties.items():
            prefix = cls.FLAT.get(key)
            if prefix is None:
                spread[key] = value
                continue
            inner = handler.resolve_ref_schema(value)
            spread.update({prefix + name: schema for name, schema in inner.get("properties", {}).items()})
            if key in required:
                required.remove(key)
                required += [prefix + name for name in inner.get("required", [])]
        for name in cls.VIEWS:
            spread.setdefault(name, {"readOnly": True, "description": "computed from the record for its readers "
                                     "(never read back)"})
        target["properties"] = spread
        if required:
            target["required"] = required
        return json_schema


@functools.cache
def flat_keys(model: type[FlatRecord]) -> dict[str, tuple[tuple[str, str], ...]]:
    """Per ``FLAT`` field, (key in the file, name in the embedded model) of each of its fields."""
    out = {}
    for name, prefix in model.FLAT.items():
        annotation = model.model_fields[name].annotation
        inner = getattr(annotation, "model_fields", {})
        out[name] = tuple((prefix + n, n) for n in inner)
    return out


def gather_flat(model: type[FlatRecord], data: dict[str, Any]) -> dict[str, Any]:
    """``data`` (a file's top level, or keyword arguments) with each ``FLAT`` field gathered from
    its prefixed keys, unless given whole, and the ``VIEWS`` keys dropped."""
    data = dict(data)
    for view in model.VIEWS:
        # a view may share a field's name (a manifest entry's version-1 ``resolved`` block): the
        # field given whole, as its model, stays
        if not isinstance(data.get(view), BaseModel):
            data.pop(view, None)
    for name, keys in flat_keys(model).items():
        if name not in data:
            data[name] = {inner: data.pop(key) for key, inner in keys if key in data}
    return data


class StoreModel(FlatRecord):
    """A record of a run directory (``SCHEMA_VERSION`` is the version this code writes)."""

    model_config = ConfigDict(extra="allow", populate_by_name=True,
                              json_schema_extra=_version_in_schema)

    SCHEMA_VERSION: ClassVar[int] = 1
    UPGRADES: ClassVar[dict[int, Upgrade]] = {}
    #: The file name a record is exported under in docs/schemas/ (and found by in messages).
    FILE: ClassVar[str] = ""

    schema_version: int = Field(default=0, description="version of this record's shape; readers upgrade older ones")

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        version = data.get("schema_version")
        if not version:
            data = {**data, "schema_version": cls.SCHEMA_VERSION}
        elif version != cls.SCHEMA_VERSION:
            data = cls.upgrade(data)
        return super().prepare(data)

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
            loc = [str(p) for p in first.get("loc", ())]
            if loc and loc[0] in cls.FLAT:  # an embedded model's key stands at the file's top level
                loc = [cls.FLAT[loc[0]] + ".".join(loc[1:])]
            field = ".".join(loc) or "(record)"
            raise StoreError(f"{where}not a valid {cls.__name__} ({field}: {first.get('msg')})") from None

    def record(self) -> dict[str, Any]:
        """The JSON-ready mapping written to disk (enums as their values, every field present)."""
        return self.model_dump(mode="json")

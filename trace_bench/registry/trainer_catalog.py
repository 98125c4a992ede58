"""Static metadata of the built-in trainers, and the listing that ``list-trainers`` prints.

Listing must cost what ``list-tasks`` costs, so it imports no trainer module (they bring pydantic
and, later, ``opto`` and the external libraries): availability comes from ``find_spec`` of the
packages a trainer requires.  Resolution (``registry.trainers.all_trainers``) imports the classes;
the table (``trainers/catalog.json``) is the one place a built-in trainer's id and metadata are
written: the classes take theirs from it (``tests/cli/test_listing.py`` checks they agree).
Entry-point plugins have no static metadata: their classes are imported to list them.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from trace_bench.registry.rows import read_rows
from trace_bench.registry.specs import missing_packages

ENTRY_POINT_GROUP = "trace_bench.trainers"
#: what opto's own trainers optimize: any trainable node, through an opto optimizer
OPTO_PARAMETERS = ("text", "code", "numeric")


@dataclass(frozen=True)
class ContractSettings:
    """Short settings the trainer contract check runs a built-in trainer with (its ``contract`` in
    catalog.json): knobs that keep each job to a few steps, and the task when the default one
    (``trace_bench.testing``'s ``internal:numeric_param``) has no parameter kind the trainer
    optimizes.  Every registered trainer runs the contract in the test suite with these, so a new
    row is covered with no edit to the test; they bound its cost, not its result."""

    params: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}), hash=False)
    task: str | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "params", MappingProxyType(dict(self.params)))


@dataclass(frozen=True)
class TrainerMetadata:
    """What listing needs to know about a built-in trainer, written next to its import target."""

    id: str
    target: str  # "module:Class"
    description: str
    source: str = "built-in"
    requires: tuple[str, ...] = ()
    extra: str | None = None
    optional: bool = False  # the module may be absent from a checkout: registered only when present
    probe: str | None = None  # "module:function" returning a finer reason (or None); must import nothing heavy
    aliases: tuple[str, ...] = ()
    #: the kinds of trainable parameter it optimizes: the words of list-tasks' ``parameters`` column
    parameters: tuple[str, ...] = ()
    #: the knob freed under a budget, the knobs that keep it bounded when set, how it then stops
    budget_knob: str | None = None
    budget_bounds: tuple[str, ...] = ()
    budget_stop: str = ""
    #: what the contract test runs it with (a ``{"params": ..., "task": ...}`` object in the file)
    contract: ContractSettings = field(default_factory=ContractSettings)

    def __post_init__(self) -> None:
        if isinstance(self.contract, Mapping):  # as read from the file
            object.__setattr__(self, "contract", ContractSettings(**self.contract))

    @property
    def module(self) -> str:
        return self.target.partition(":")[0]

    def present(self) -> bool:
        if not self.optional:
            return True
        try:
            return importlib.util.find_spec(self.module) is not None
        except (ImportError, ValueError):
            return False


def unavailable_reason(requires: tuple[str, ...], extra: str | None, probe: str | None = None) -> str | None:
    """The reason a trainer cannot run here, or None: its required packages are missing, else its
    ``probe`` (a light ``module:function``, for a dependency a package name cannot describe, such
    as a library version without the API a backend imports) answers with a reason."""
    absent = missing_packages(*requires)
    if absent:
        return f"install trace-bench[{extra}]" if extra else f"missing {', '.join(absent)}"
    if probe is None:
        return None
    module_name, _, attr = probe.partition(":")
    try:
        reason = getattr(importlib.import_module(module_name), attr)()
    except Exception as exc:  # a broken probe must not break listing
        return f"availability check {probe} failed: {type(exc).__name__}: {exc}"
    return str(reason) if reason else None


def _builtin_trainers() -> tuple[TrainerMetadata, ...]:
    """The rows of trace_bench/trainers/catalog.json, in listing order inside a source (the one table
    of built-in trainers: their classes take their ids and metadata from it too).  Read as a file:
    importing the trainers package would not be cheap for every caller."""
    return read_rows(Path(__file__).resolve().parents[1] / "trainers" / "catalog.json", TrainerMetadata)


BUILTIN_TRAINERS: tuple[TrainerMetadata, ...] = _builtin_trainers()


def external_trainer_names() -> frozenset[str]:
    """The ids and aliases (lower case) of the built-in trainers that drive an external library."""
    return frozenset(name.lower() for meta in BUILTIN_TRAINERS if meta.source == "external"
                     for name in (meta.id, *meta.aliases))


@dataclass(frozen=True)
class TrainerListing:
    """One row of ``list-trainers``."""

    id: str
    source: str
    reason: str | None
    description: str
    parameters: tuple[str, ...] = ()
    budget_knob: str | None = None
    budget_stop: str = ""

    @property
    def available(self) -> bool:
        return self.reason is None


def _plugin_rows() -> list[TrainerListing]:
    """Entry-point trainers: their classes are imported (a plugin has no static metadata)."""
    from trace_bench._util.entry_points import entry_points

    try:
        points = list(entry_points(group=ENTRY_POINT_GROUP))
    except Exception:  # a broken plugin distribution must not break listing
        return []
    rows = []
    for point in points:
        module_name, _, attr = point.value.partition(":")
        try:
            cls = getattr(importlib.import_module(module_name), attr)
        except Exception as exc:
            rows.append(TrainerListing(point.name, "plugin", f"import failed: {type(exc).__name__}: {exc}", ""))
            continue
        reason = unavailable_reason(tuple(getattr(cls, "requires", ())), getattr(cls, "extra", None),
                                    getattr(cls, "probe", None))
        rows.append(TrainerListing(getattr(cls, "id", point.name), "plugin", reason,
                                   getattr(cls, "description", ""), tuple(getattr(cls, "parameters", ())),
                                   getattr(cls, "budget_knob", None), getattr(cls, "budget_stop", "")))
    return rows


def _opto_native_rows(taken: set[str]) -> list[TrainerListing]:
    """opto's own trainers (OpenTrace 0.2.x), found by reading its source; none on trace-opt 0.1.3.8,
    where this costs one ``find_spec`` and imports no trainer module."""
    import importlib.util
    from pathlib import Path

    try:
        spec = importlib.util.find_spec("opto")
    except (ImportError, ValueError):
        return []
    roots = [Path(p) for p in (spec.submodule_search_locations or [])] if spec else []
    if not any((root / "trainer" / "algorithms" / "__init__.py").is_file() for root in roots):
        return []
    from trace_bench.trainers.opto_native import native_trainer_classes

    return [TrainerListing(cls.id, "opto", None, cls.description, OPTO_PARAMETERS)
            for cls in native_trainer_classes({trainer_id.lower() for trainer_id in taken})]


def list_trainer_rows(include_unavailable: bool = False) -> list[TrainerListing]:
    """Every registered trainer, sorted by id; unavailable ones only when asked, with the reason.

    Same rows as ``registry.trainers.list_trainers`` (which imports every class), at the cost of a
    few ``find_spec`` calls.  A plugin replaces a built-in trainer of the same id, as in resolution.
    """
    rows = {meta.id: TrainerListing(meta.id, meta.source, unavailable_reason(meta.requires, meta.extra, meta.probe),
                                    meta.description, meta.parameters, meta.budget_knob, meta.budget_stop)
            for meta in BUILTIN_TRAINERS if meta.present()}
    rows.update({row.id: row for row in _plugin_rows()})
    rows.update({row.id: row for row in _opto_native_rows(set(rows))})
    ordered = sorted(rows.values(), key=lambda row: row.id.lower())
    return [row for row in ordered if include_unavailable or row.available]

"""The dated best-known registry of the built-in ``discovery:`` problems: ``problems/best_known.json``.

Per problem it holds two yardsticks, each with its source and date: **AlphaEvolve's** value with its
published construction (the value is what our scorer computes for that construction, in full
precision; ``published`` is the figure the paper prints), and the **best value known today** with the
paper, repository or table it comes from.  It also holds the problem's direction, the tolerance its
verifier checks constraints at (what the problem's module used to hold as ``TOLERANCE``), and later
claims that are not (yet) the yardstick, with why.

A value is written as its source prints it.  ``exact`` says the decimal *is* the value (a float our
scorer computed, an integer); otherwise it is a rounding, and stands for anything within half a
unit of its last digit (:attr:`Record.margin`): a construction *beats* it only beyond that margin,
after the exact re-check (:func:`trace_bench.tasks.discovery.problems.common.result`).

Listing reads this file (``list-tasks --bench discovery`` shows both yardsticks), so the reader is
plain Python (dataclasses, checked field by field): pydantic would cost listing ~0.4 s.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, fields
from decimal import Decimal, InvalidOperation
from fractions import Fraction
from functools import cache
from pathlib import Path
from typing import Any

from trace_bench._util.errors import TraceBenchError

REGISTRY_FILE = Path(__file__).with_name("problems") / "best_known.json"
SCHEMA_VERSION = 1
DIRECTIONS = ("max", "min")


class RegistryError(TraceBenchError, ValueError):
    """The registry file breaks its schema (the message names the problem and the field)."""


@dataclass(frozen=True)
class Record:
    """One value with where it comes from."""

    value: str
    source: str
    url: str
    date: str
    exact: bool = False
    note: str = ""

    @property
    def number(self) -> float:
        return float(self.value)

    @property
    def fraction(self) -> Fraction:
        """The value as printed, exactly."""
        return Fraction(Decimal(self.value))

    @property
    def margin(self) -> Fraction:
        """Half a unit of the value's last printed digit (0 for an exact value): a rounded record
        stands for every value within it."""
        if self.exact:
            return Fraction(0)
        exponent = Decimal(self.value).as_tuple().exponent
        return Fraction(1, 2) * Fraction(10) ** int(exponent) if isinstance(exponent, int) else Fraction(0)

    def cited(self) -> str:
        return f"{self.source} ({self.date})"


@dataclass(frozen=True)
class AlphaEvolveRecord(Record):
    """AlphaEvolve's result: ``value`` is our scorer's value of ``construction`` (full precision),
    ``published`` the figure the paper prints; ``construction`` is null where it could not be had,
    ``construction_note`` then says why (else where it was read)."""

    published: str = ""
    construction: Any = None
    construction_note: str = ""


@dataclass(frozen=True)
class ProblemRecord:
    name: str
    direction: str
    quantity: str
    tolerance: float
    tolerance_means: str
    alphaevolve: AlphaEvolveRecord
    best_known: Record
    claims: tuple[Record, ...] = ()

    def yardsticks(self) -> str:
        """``best known 2.63598308 (ThetaEvolve ..., 2025-11-28); AlphaEvolve 2.6358627564136983``: both, for listings."""
        return (f"best known {self.best_known.value} ({self.best_known.cited()}); "
                f"AlphaEvolve {self.alphaevolve.value} ({self.alphaevolve.date})")


@dataclass(frozen=True)
class Registry:
    consulted: str
    sources_consulted: tuple[str, ...]
    problems: dict[str, ProblemRecord]


def _text(data: dict[str, Any], key: str, where: str, *, required: bool = True) -> str:
    value = data.get(key, None if required else "")
    if not isinstance(value, str) or (required and not value.strip()):
        raise RegistryError(f"{REGISTRY_FILE.name}: {where}.{key} must be a non-empty string, got {value!r}")
    return value


def _record(data: Any, where: str, cls: type[Record] = Record) -> Any:
    if not isinstance(data, dict):
        raise RegistryError(f"{REGISTRY_FILE.name}: {where} must be an object")
    known = {f.name for f in fields(cls)}
    unknown = sorted(set(data) - known)
    if unknown:
        raise RegistryError(f"{REGISTRY_FILE.name}: {where} has unknown keys {unknown}; allowed: {sorted(known)}")
    values = {key: _text(data, key, where) for key in ("value", "source", "url", "date")}
    try:
        if not Decimal(values["value"]).is_finite():
            raise InvalidOperation
    except InvalidOperation:
        raise RegistryError(f"{REGISTRY_FILE.name}: {where}.value must be a decimal number, got {values['value']!r}") from None
    if not isinstance(data.get("exact", False), bool):
        raise RegistryError(f"{REGISTRY_FILE.name}: {where}.exact must be true or false")
    extra: dict[str, Any] = {key: data[key] for key in known - set(values) if key in data}
    for key in ("note", "published", "construction_note"):
        if key in extra and not isinstance(extra[key], str):
            raise RegistryError(f"{REGISTRY_FILE.name}: {where}.{key} must be a string")
    return cls(value=values["value"], source=values["source"], url=values["url"], date=values["date"], **extra)


def _problem(name: str, data: Any) -> ProblemRecord:
    where = f"problems.{name}"
    if not isinstance(data, dict):
        raise RegistryError(f"{REGISTRY_FILE.name}: {where} must be an object")
    direction = _text(data, "direction", where)
    if direction not in DIRECTIONS:
        raise RegistryError(f"{REGISTRY_FILE.name}: {where}.direction must be max or min, got {direction!r}")
    tolerance = data.get("tolerance")
    if isinstance(tolerance, bool) or not isinstance(tolerance, (int, float)) or not 0 <= tolerance < 1e-3:
        raise RegistryError(f"{REGISTRY_FILE.name}: {where}.tolerance must be a number in [0, 1e-3), got {tolerance!r}")
    alphaevolve = _record(data.get("alphaevolve"), f"{where}.alphaevolve", AlphaEvolveRecord)
    if alphaevolve.construction is None and not alphaevolve.construction_note.strip():
        raise RegistryError(f"{REGISTRY_FILE.name}: {where}.alphaevolve has no construction and no "
                            "construction_note saying why")
    claims = data.get("claims", [])
    if not isinstance(claims, list):
        raise RegistryError(f"{REGISTRY_FILE.name}: {where}.claims must be a list")
    return ProblemRecord(name=name, direction=direction, quantity=_text(data, "quantity", where),
                         tolerance=float(tolerance), tolerance_means=_text(data, "tolerance_means", where),
                         alphaevolve=alphaevolve, best_known=_record(data.get("best_known"), f"{where}.best_known"),
                         claims=tuple(_record(c, f"{where}.claims[{i}]") for i, c in enumerate(claims)))


def parse_registry(data: Any) -> Registry:
    """The registry from its JSON data; :class:`RegistryError` naming the first field that breaks it."""
    if not isinstance(data, dict) or data.get("schema_version") != SCHEMA_VERSION:
        raise RegistryError(f"{REGISTRY_FILE.name}: schema_version must be {SCHEMA_VERSION}")
    problems = data.get("problems")
    if not isinstance(problems, dict) or not problems:
        raise RegistryError(f"{REGISTRY_FILE.name}: problems must be a non-empty object")
    consulted = data.get("sources_consulted", [])
    if not isinstance(consulted, list) or not all(isinstance(s, str) for s in consulted):
        raise RegistryError(f"{REGISTRY_FILE.name}: sources_consulted must be a list of strings")
    return Registry(consulted=_text(data, "consulted", "registry"), sources_consulted=tuple(consulted),
                    problems={name: _problem(name, entry) for name, entry in problems.items()})


@cache
def registry() -> Registry:
    """The registry file, read and checked once per process."""
    return parse_registry(json.loads(REGISTRY_FILE.read_text(encoding="utf-8")))


def problem_record(name: str) -> ProblemRecord:
    return registry().problems[name]

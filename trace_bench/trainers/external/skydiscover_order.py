"""SkyDiscover's beam search, made repeatable: its sets of program ids iterate in insertion order.

``BeamSearchDatabase`` keeps its beam and its expanded programs in Python ``set`` objects of
``uuid4`` ids and picks a parent by walking the beam in the set's order with a seeded
``random.random()``.  The order of a set of strings depends on the string hashes, so on
``PYTHONHASHSEED`` and on the random ids: two runs of one seed chose different parents (one of them
a failed candidate, after which none of four stub candidates improved: QA finding F8).  Here the
two attributes become sets that iterate in the order their ids arrived (what "the last 10
expanded" in the library means); the search itself, its scores and its random draws are unchanged.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

ORDERED_ATTRIBUTES = ("beam", "expanded")


class InsertionOrderedIds(set):
    """A set of ids that iterates in the order they were added (ids it holds but never saw added,
    which no method of the library makes, come last, sorted)."""

    def __init__(self, items: Iterable[Any] = ()) -> None:
        super().__init__()
        self._order: dict[Any, None] = {}
        self.update(items)

    def add(self, item: Any) -> None:
        super().add(item)
        self._order.setdefault(item, None)

    def update(self, *others: Iterable[Any]) -> None:
        for other in others:
            for item in other:
                self.add(item)

    def discard(self, item: Any) -> None:
        super().discard(item)
        self._order.pop(item, None)

    def remove(self, item: Any) -> None:
        super().remove(item)
        self._order.pop(item, None)

    def clear(self) -> None:
        super().clear()
        self._order.clear()

    def __iter__(self) -> Iterator[Any]:
        members = set(super().__iter__())
        known = [item for item in self._order if item in members]
        return iter(known + sorted(members.difference(known), key=str))


class _Ordered:
    """A data attribute that stores any set assigned to it as :class:`InsertionOrderedIds`, keeping the
    order the attribute had for the ids it keeps (``self.beam = set(selected)`` after a prune)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        try:
            return obj.__dict__[self.name]
        except KeyError:
            raise AttributeError(self.name) from None

    def __set__(self, obj: Any, value: Iterable[Any]) -> None:
        previous = obj.__dict__.get(self.name)
        wanted = set(value)
        kept = [item for item in previous if item in wanted] if isinstance(previous, InsertionOrderedIds) else []
        ordered = InsertionOrderedIds(kept)
        ordered.update(sorted(wanted.difference(kept), key=str))
        obj.__dict__[self.name] = ordered


_CLASSES: dict[type, type] = {}


def insertion_ordered(database: Any) -> Any:
    """Make ``database``'s beam and expanded sets iterate in insertion order (a beam-search database;
    any other database is returned untouched)."""
    cls = type(database)
    if not all(isinstance(database.__dict__.get(name), set) for name in ORDERED_ATTRIBUTES):
        return database
    if cls not in _CLASSES:
        _CLASSES[cls] = type(f"InsertionOrdered{cls.__name__}", (cls,),
                             {name: _Ordered() for name in ORDERED_ATTRIBUTES} | {"__module__": __name__})
    values = {name: database.__dict__.pop(name) for name in ORDERED_ATTRIBUTES}
    database.__class__ = _CLASSES[cls]
    for name, value in values.items():
        setattr(database, name, value)
    return database

"""Trainable parameters as plain states: snapshot, apply, compare, describe.

A *state* is the list of values of a problem's trainable parameters, in a fixed order.
Trainers keep candidates as states and apply them to the live parameters; this replaces
``Module.copy`` and ``step(bypassing=True)``, which ``opto`` 0.1.3.8 lacks or ignores.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

State = list[Any]


def trainable_parameters(param: Any) -> list[Any]:
    """The trainable ``ParameterNode``s of a node, a ``trace.Module`` or a list of them."""
    from opto.trace.nodes import ParameterNode

    if isinstance(param, ParameterNode):
        return [param] if param.trainable else []
    if isinstance(param, (list, tuple)):
        found: list[Any] = []
        for item in param:
            found.extend(trainable_parameters(item))
        return found
    parameters = getattr(param, "parameters", None)
    if callable(parameters):
        try:
            nodes = parameters()
        except Exception:
            return []
        seen: set[int] = set()
        out = []
        for node in nodes:
            if isinstance(node, ParameterNode) and node.trainable and id(node) not in seen:
                seen.add(id(node))
                out.append(node)
        return out
    return []


def snapshot(parameters: list[Any]) -> State:
    return [copy.deepcopy(p.data) for p in parameters]


def apply_state(parameters: list[Any], state: State) -> None:
    """Set the live parameters to ``state`` (what ``Optimizer.update`` does, for every parameter)."""
    if len(state) != len(parameters):
        raise ValueError(f"state has {len(state)} values for {len(parameters)} parameters")
    for parameter, value in zip(parameters, state, strict=True):
        parameter._data = copy.deepcopy(value)


def state_from_update(parameters: list[Any], base: State, update: dict[Any, Any]) -> State:
    """A full state from an optimizer proposal ``{ParameterNode: value}`` (missing = unchanged)."""
    by_id = {id(p): i for i, p in enumerate(parameters)}
    by_name = {p.py_name: i for i, p in enumerate(parameters)}
    state = copy.deepcopy(base)
    for node, value in update.items():
        index = by_id.get(id(node))
        if index is None:
            index = by_name.get(getattr(node, "py_name", None))
        if index is not None:
            state[index] = copy.deepcopy(value)
    return state


def state_key(state: State) -> str:
    """Stable identity of a state, for de-duplication and evaluation caches."""
    blob = json.dumps(state, sort_keys=True, default=repr)
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def describe(parameters: list[Any], state: State) -> dict[str, Any]:
    """A JSON/YAML-friendly view of a state: index, name and value of every trainable parameter."""
    return {
        "kind": "state",
        "parameters": [
            {"index": i, "name": p.py_name, "trainable": True, "value": _plain(v)}
            for i, (p, v) in enumerate(zip(parameters, state, strict=True))
        ],
    }


def _plain(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    item = getattr(value, "item", None)
    if callable(item):
        try:
            return item()
        except Exception:
            pass
    return repr(value)

"""The numeric search space of a task, for the non-LLM baselines: what they may change, and how far.

By default the space is the initial state's numbers: every numeric trainable parameter (a float or
an int) and every numeric literal in a code parameter (an evolve block's constants, a trainable
function's), each over ``initial ± scale × max(|initial|, 1)``.  A task may declare its own space
(``search_space`` in its problem, top level or metadata): a mapping ``name -> {low, high, log?, int?}``
over its numeric parameters, by the parameter's name (``x``, ``a``).  A candidate is the initial state
with the sampled values put back (literals rewritten in place, in full precision), so it is run and
scored exactly like a proposal of an LLM optimizer.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from trace_bench._util.errors import TraceBenchError

State = list[Any]


@dataclass(frozen=True)
class Dimension:
    """One number of the state: parameter ``index`` itself (``literal`` None) or one literal in its code
    (``literal``: the literal's (start, end) offsets in the code text)."""

    name: str
    index: int
    initial: float
    low: float
    high: float
    integer: bool = False
    log: bool = False
    literal: tuple[int, int] | None = None


class SpaceError(TraceBenchError, ValueError):
    """The task has nothing a numeric search could change, or declares a space that does not fit it."""


def _bounds(value: float, scale: float, integer: bool) -> tuple[float, float]:
    width = scale * max(abs(value), 1.0)
    low, high = value - width, value + width
    return (math.floor(low), math.ceil(high)) if integer else (low, high)


def _offsets(code: str) -> list[int]:
    starts, total = [], 0
    for line in code.splitlines(keepends=True):
        starts.append(total)
        total += len(line.encode("utf-8"))
    return starts


def code_literals(code: str) -> list[tuple[int, int, float, bool]]:
    """(start, end, value, is_int) of every numeric literal in ``code`` (byte offsets; booleans are not
    numbers); none when the code does not parse."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    starts = _offsets(code)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) \
                and not isinstance(node.value, bool) and node.end_lineno is not None and node.end_col_offset is not None:
            start = starts[node.lineno - 1] + node.col_offset
            end = starts[node.end_lineno - 1] + node.end_col_offset
            found.append((start, end, float(node.value), isinstance(node.value, int)))
    return sorted(found)


def _is_code(value: Any) -> bool:
    return isinstance(value, str) and ("def " in value or "\n" in value)


def build_space(state: State, names: Sequence[str], *, scale: float = 10.0,
                declared: Mapping[str, Any] | None = None) -> list[Dimension]:
    """The dimensions of ``state`` (see the module doc); ``names`` are the parameters' names."""
    if declared:
        return _declared(state, names, declared)
    dimensions: list[Dimension] = []
    for index, (name, value) in enumerate(zip(names, state, strict=True)):
        if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
            integer = isinstance(value, int)
            low, high = _bounds(float(value), scale, integer)
            dimensions.append(Dimension(name, index, float(value), low, high, integer))
        elif _is_code(value):
            for number, (start, end, literal, integer) in enumerate(code_literals(value)):
                low, high = _bounds(literal, scale, integer)
                dimensions.append(Dimension(f"{name}:literal{number}", index, literal, low, high, integer,
                                            literal=(start, end)))
    if not dimensions:
        raise SpaceError("the task's trainable parameters hold no number to search over (no numeric parameter and "
                         "no numeric literal in its code); declare a search_space in the task's problem")
    return dimensions


def _declared(state: State, names: Sequence[str], declared: Mapping[str, Any]) -> list[Dimension]:
    dimensions = []
    for name, spec in declared.items():
        if name not in names:
            raise SpaceError(f"search_space names {name!r}, which is not a trainable parameter ({', '.join(names)})")
        index = list(names).index(name)
        if not isinstance(spec, Mapping) or not {"low", "high"} <= set(spec):
            raise SpaceError(f"search_space.{name} must be a mapping with low and high")
        low, high = float(spec["low"]), float(spec["high"])
        if not low < high or (spec.get("log") and low <= 0):
            raise SpaceError(f"search_space.{name}: need low < high (and low > 0 on a log scale)")
        value = state[index]
        initial = float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else low
        dimensions.append(Dimension(name, index, min(max(initial, low), high), low, high,
                                    bool(spec.get("int", False)), bool(spec.get("log", False))))
    return dimensions


def _number_text(value: float, integer: bool) -> str:
    text = str(int(round(value))) if integer else repr(float(value))
    return f"({text})" if text.startswith("-") else text


def apply_values(state: State, dimensions: Sequence[Dimension], values: Sequence[float]) -> State:
    """``state`` with each dimension set to its value (literals rewritten in their code, last first)."""
    new = list(state)
    edits: dict[int, list[tuple[int, int, str]]] = {}
    for dimension, value in zip(dimensions, values, strict=True):
        number = int(round(value)) if dimension.integer else float(value)
        if dimension.literal is None:
            new[dimension.index] = number
        else:
            edits.setdefault(dimension.index, []).append((*dimension.literal, _number_text(number, dimension.integer)))
    for index, changes in edits.items():
        code = str(state[index]).encode("utf-8")
        for start, end, text in sorted(changes, reverse=True):
            code = code[:start] + text.encode("utf-8") + code[end:]
        new[index] = code.decode("utf-8")
    return new

"""The only format that crosses the sandbox boundary: plain data as JSON, never pickle.

Decoding bytes that a sandbox produced can only ever build these values, so a hostile sandbox
cannot run code in the trusted process (``pickle.loads`` of a ``__reduce__`` object could):

==========================  ==============================================================
Python value                JSON
==========================  ==============================================================
None, bool, int, str        as themselves (ints of any size)
float                       a number; NaN and ±inf as ``NaN`` / ``Infinity`` / ``-Infinity``
list                        an array
dict with str keys          an object (unless a key is ``"$t"``: then the tagged form)
tuple / set / frozenset     ``{"$t": "tuple" | "set" | "frozenset", "v": [...]}``
other dict                  ``{"$t": "dict", "v": [[key, value], ...]}``
bytes                       ``{"$t": "bytes", "v": base64}``
complex                     ``{"$t": "complex", "v": [real, imag]}``
numpy array (numeric/bool)  ``{"$t": "ndarray", "dtype": "<f8", "shape": [...], "v": base64}``
numpy scalar                the equivalent Python scalar
==========================  ==============================================================

Anything else (objects, functions, object-dtype arrays) raises :class:`CodecError` when
encoding; unknown tags, bad array headers and nesting deeper than :data:`MAX_DEPTH` raise it
when decoding.  Callers bound the size of what they read before decoding, and where the bytes
come from a sandbox, the number of values too (``max_values``), which bounds the memory decoding
takes (see :data:`trace_bench.sandbox.policy.RESULT_MAX_VALUES`).
"""

from __future__ import annotations

import base64
import json
import math
from typing import Any

from trace_bench._util.errors import TraceBenchError

MAX_DEPTH = 100
TAG = "$t"
_ARRAY_KINDS = "biufc"  # bool, signed, unsigned, float, complex: plain bytes, no Python objects


class CodecError(TraceBenchError, ValueError):
    """A value that is not plain data, or bytes that are not a valid encoding."""


class TooManyValues(CodecError):
    """Bytes that would decode into more values than the caller allows."""


def _to_tree(value: Any, depth: int) -> Any:
    if depth > MAX_DEPTH:
        raise CodecError(f"value nested deeper than {MAX_DEPTH} levels")
    if value is None or isinstance(value, (bool, str)):
        return value
    if isinstance(value, int):
        return int(value)
    if isinstance(value, float):
        return float(value)
    if isinstance(value, list):
        return [_to_tree(item, depth + 1) for item in value]
    if isinstance(value, dict):
        if all(isinstance(key, str) for key in value) and TAG not in value:
            return {key: _to_tree(item, depth + 1) for key, item in value.items()}
        return {TAG: "dict", "v": [[_to_tree(k, depth + 1), _to_tree(v, depth + 1)] for k, v in value.items()]}
    if isinstance(value, tuple):
        return {TAG: "tuple", "v": [_to_tree(item, depth + 1) for item in value]}
    if isinstance(value, (set, frozenset)):
        kind = "frozenset" if isinstance(value, frozenset) else "set"
        return {TAG: kind, "v": [_to_tree(item, depth + 1) for item in value]}
    if isinstance(value, (bytes, bytearray)):
        return {TAG: "bytes", "v": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, complex):
        return {TAG: "complex", "v": [value.real, value.imag]}
    return _numpy_to_tree(value, depth)


def _numpy_to_tree(value: Any, depth: int) -> Any:
    kind = type(value).__module__.split(".")[0]
    if kind == "numpy":
        import numpy as np

        if isinstance(value, np.ndarray):
            if value.dtype.kind not in _ARRAY_KINDS or value.dtype.fields is not None:
                raise CodecError(f"numpy arrays of dtype {value.dtype} cannot cross the sandbox boundary")
            data = value if value.flags.c_contiguous else value.copy(order="C")  # keeps 0-d arrays 0-d
            return {TAG: "ndarray", "dtype": data.dtype.str, "shape": list(data.shape),
                    "v": base64.b64encode(data.tobytes()).decode("ascii")}
        if isinstance(value, np.generic) and value.dtype.kind in _ARRAY_KINDS:
            return _to_tree(value.item(), depth)
    raise CodecError(f"{type(value).__name__} is not plain data (allowed: None, bool, int, float, str, list, "
                     "tuple, dict, set, bytes, complex, numeric numpy arrays)")


def encode(value: Any) -> bytes:
    """``value`` as UTF-8 JSON; :class:`CodecError` when it is not plain data."""
    try:
        return json.dumps(_to_tree(value, 0), separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    except RecursionError as exc:
        raise CodecError("value nested too deeply") from exc


def _from_tree(node: Any, depth: int) -> Any:
    """The value of a parsed JSON tree.  Lists and untagged objects are converted in place, so that
    decoding never holds two copies of a large result."""
    if depth > MAX_DEPTH:
        raise CodecError(f"data nested deeper than {MAX_DEPTH} levels")
    if isinstance(node, list):
        for index, item in enumerate(node):
            if isinstance(item, (list, dict)):
                node[index] = _from_tree(item, depth + 1)
        return node
    if not isinstance(node, dict):
        return node
    if TAG not in node:
        for key, item in node.items():
            if isinstance(item, (list, dict)):
                node[key] = _from_tree(item, depth + 1)
        return node
    tag = node[TAG]
    items: Any = node.get("v")  # a JSON value; checked per tag below
    if tag in ("tuple", "set", "frozenset", "dict") and not isinstance(items, list):
        raise CodecError(f"tagged value {tag!r} without a list")
    try:
        if tag == "tuple":
            return tuple(_from_tree(item, depth + 1) for item in items)
        if tag in ("set", "frozenset"):
            members = (_from_tree(item, depth + 1) for item in items)
            return set(members) if tag == "set" else frozenset(members)
        if tag == "dict":
            return {_from_tree(k, depth + 1): _from_tree(v, depth + 1) for k, v in items}
        if tag == "bytes":
            return base64.b64decode(str(items), validate=True)
        if tag == "complex":
            real, imag = items
            return complex(float(real), float(imag))
    except (TypeError, ValueError) as exc:  # unhashable keys or members, bad base64, wrong arity
        raise CodecError(f"malformed {tag!r} value: {exc}") from exc
    if tag == "ndarray":
        return _array_from_tree(node)
    raise CodecError(f"unknown tag {tag!r}")


def _array_from_tree(node: dict[str, Any]) -> Any:
    import numpy as np

    try:
        dtype = np.dtype(str(node["dtype"]))
        shape = tuple(int(n) for n in node["shape"])
        raw = base64.b64decode(str(node["v"]), validate=True)
    except (KeyError, TypeError, ValueError) as exc:
        raise CodecError(f"malformed array: {exc}") from exc
    if dtype.kind not in _ARRAY_KINDS or dtype.fields is not None or any(n < 0 for n in shape):
        raise CodecError(f"array of dtype {dtype} and shape {shape} is not allowed")
    if math.prod(shape) * dtype.itemsize != len(raw):
        raise CodecError(f"array data of {len(raw)} bytes does not match dtype {dtype} and shape {shape}")
    return np.frombuffer(raw, dtype=dtype).reshape(shape).copy()


def count_values(data: bytes | bytearray) -> int:
    """An upper bound of the values (keys included) that decoding ``data`` makes, counted in C:
    every value but the first follows a ``,``, a ``:`` or an opening bracket."""
    return 1 + sum(data.count(mark) for mark in (b"[", b"{", b",", b":"))


def decode(data: bytes | bytearray, *, max_values: int | None = None) -> Any:
    """The value encoded in ``data``; :class:`CodecError` for anything that is not a valid encoding.

    ``max_values`` bounds the memory a hostile encoding can make the decoder allocate: a small
    frame of empty lists (``[[],[],...]``) costs ~20x its size in Python objects.  Data with more
    values (:func:`count_values`) is refused before it is parsed.
    """
    if max_values is not None and count_values(data) > max_values:
        raise TooManyValues(f"the data holds more than {max_values:,} values")
    try:
        return _from_tree(json.loads(data), 0)
    except CodecError:
        raise
    except (UnicodeDecodeError, ValueError, RecursionError, MemoryError) as exc:
        raise CodecError(f"not a valid encoding: {type(exc).__name__}: {str(exc)[:200]}") from exc

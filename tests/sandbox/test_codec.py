"""The boundary's data format: plain values round-trip exactly; nothing else is encoded or decoded."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from trace_bench.sandbox.codec import MAX_DEPTH, CodecError, decode, encode


@pytest.mark.parametrize("value", [
    None, True, 0, -7, 10**40, 0.1, -0.0, "text é", [], {}, [1, [2, [3]]], {"a": {"b": [None]}},
    (1, "two", (3.0,)), {1: "int key", (2, 3): "tuple key"}, {"$t": "not a tag"}, b"\x00\xffbytes",
    {1, 2}, frozenset({"x"}), 3 + 4j, [float("inf"), -float("inf")],
])
def test_plain_values_round_trip_exactly(value: object) -> None:
    back = decode(encode(value))
    assert back == value and type(back) is type(value)


def test_nan_and_numpy_values() -> None:
    assert math.isnan(decode(encode(float("nan"))))
    assert decode(encode(np.float32(1.5))) == 1.5 and type(decode(encode(np.int64(3)))) is int
    for array in (np.arange(12, dtype=np.int16).reshape(3, 4), np.zeros((0, 3)), np.array(2.5), np.array([True, False]),
                  np.array([1 + 2j], dtype=np.complex64), np.asfortranarray(np.eye(3))):
        back = decode(encode(array))
        assert back.dtype == array.dtype and back.shape == array.shape and np.array_equal(back, array)
        back[...] = 0  # a writable copy


@pytest.mark.parametrize("value", [print, object(), np.array([object()]), np.zeros(2, dtype=[("a", "i4")]),
                                   {frozenset(): lambda: 0}])
def test_anything_else_is_refused_when_encoding(value: object) -> None:
    with pytest.raises(CodecError):
        encode(value)


def test_nesting_is_bounded_both_ways() -> None:
    deep: list = []
    for _ in range(MAX_DEPTH + 5):
        deep = [deep]
    with pytest.raises(CodecError):
        encode(deep)
    with pytest.raises(CodecError):
        decode(b"[" * 100_000 + b"]" * 100_000)


@pytest.mark.parametrize("data", [
    b"\xff\xfe", b"{", b"[1, 2", json.dumps({"$t": "pickle", "v": "gASV"}).encode(),
    json.dumps({"$t": "ndarray", "dtype": "|O", "shape": [1], "v": "AAAAAAAAAAA="}).encode(),
    json.dumps({"$t": "ndarray", "dtype": "<f8", "shape": [3], "v": "AAAAAAAAAAA="}).encode(),
    json.dumps({"$t": "ndarray", "dtype": "<f8", "shape": [-1], "v": ""}).encode(),
    json.dumps({"$t": "bytes", "v": "not base64!"}).encode(), json.dumps({"$t": "set", "v": [[1]]}).encode(),
    json.dumps({"$t": "dict", "v": [[[1], 2]]}).encode(), json.dumps({"$t": "tuple", "v": 3}).encode(),
])
def test_malformed_input_is_refused_when_decoding(data: bytes) -> None:
    with pytest.raises(CodecError):
        decode(data)

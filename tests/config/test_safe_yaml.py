"""The bounded YAML loader, with libyaml's parser and with the pure-Python one: what it accepts,
what it refuses, and that refusing a bomb costs next to nothing."""

from __future__ import annotations

import tracemalloc

import pytest

from trace_bench._util.errors import ConfigError
from trace_bench.config import safe_yaml
from trace_bench.config.safe_yaml import LOADERS, MAX_DEPTH


def _load(loader: type, text: str) -> object:
    instance = loader(text)
    try:
        return instance.get_single_data()
    finally:
        instance.dispose()


@pytest.fixture(params=LOADERS, ids=lambda cls: cls.__name__)
def loader(request: pytest.FixtureRequest) -> type:
    return request.param


def test_anchors_aliases_and_merge_keys_are_accepted(loader: type) -> None:
    text = "base: &base {model: m, temperature: 0.5}\nllm: {<<: *base, model: other}\nroles: [*base, *base]\n"
    assert _load(loader, text) == {"base": {"model": "m", "temperature": 0.5},
                                   "llm": {"model": "other", "temperature": 0.5},
                                   "roles": [{"model": "m", "temperature": 0.5}] * 2}


def test_duplicate_keys_name_the_key_both_lines_and_the_path(loader: type) -> None:
    with pytest.raises(ConfigError) as caught:
        _load(loader, "tasks: [a]\nllm:\n  roles:\n    agent: {model: a}\n    agent: {model: b}\n")
    assert caught.value.key_path == "llm.roles"
    assert "duplicate key 'agent' on lines 4 and 5" in caught.value.reason


def test_depth_limit_is_exact(loader: type) -> None:
    ok = "[" * (MAX_DEPTH - 1) + "]" * (MAX_DEPTH - 1)
    assert _load(loader, "a: " + ok) is not None
    with pytest.raises(ConfigError, match="deeper than"):
        _load(loader, "a: " + "[" * MAX_DEPTH + "]" * MAX_DEPTH)
    with pytest.raises(ConfigError, match="deeper than"):  # mappings used as keys nest too
        _load(loader, "{" * 3000 + "}" * 3000)


@pytest.mark.timeout(30)
def test_a_bomb_is_refused_after_reading_it_once(loader: type) -> None:
    lines = ["a: &a [x, x, x, x, x, x, x, x, x, x]"]
    lines += [f"{chr(97 + i)}: &{chr(97 + i)} [{', '.join([f'*{chr(96 + i)}'] * 10)}]" for i in range(1, 12)]
    tracemalloc.start()
    try:
        with pytest.raises(ConfigError, match="expands to more than"):
            _load(loader, "\n".join(lines))
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 20 * 1024 * 1024


def test_long_scalars_aliased_many_times_count_their_characters(loader: type) -> None:
    text = "s: &s '" + "y" * 100_000 + "'\nl: [" + ", ".join(["*s"] * 20) + "]\n"
    with pytest.raises(ConfigError, match="characters"):
        _load(loader, text)


def test_text_over_the_size_limit_is_refused_before_parsing() -> None:
    with pytest.raises(ConfigError, match="larger than"):
        safe_yaml.load_bounded("a: " + "b" * safe_yaml.MAX_BYTES)

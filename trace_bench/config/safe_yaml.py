"""A bounded YAML loader for configs, built on PyYAML's loader hooks.

``yaml.safe_load`` is safe against code execution but not against hostile shapes: a 600-byte
alias bomb expands to billions of values once anything walks it as a tree (pydantic, the config
hash), 5,000 nested ``[`` overflow the recursive composer, and a duplicated key silently keeps
the last value (``mode: stub`` then ``mode: real`` made a real run).  This loader keeps PyYAML's
parser and constructor and overrides the composer's node hooks to:

- reject a key given twice in one mapping, naming the key and both lines;
- bound the nesting depth (:data:`MAX_DEPTH`);
- bound the size of the document *as if every alias were expanded* (:data:`MAX_NODES` values,
  :data:`MAX_CHARS` scalar characters), computed bottom-up in one pass, so a bomb is refused after
  reading its few lines.

The file size itself is bounded by the caller (:data:`MAX_BYTES`).  Errors are
:class:`~trace_bench._util.errors.ConfigError` with the key path where the limit was crossed.
libyaml's C parser is used when present (its event parser is iterative and 5x faster); the
composer and constructor are always the Python ones, so the bounds hold either way.
"""

from __future__ import annotations

from typing import Any

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.events import AliasEvent, MappingEndEvent, MappingStartEvent
from yaml.nodes import MappingNode, Node, ScalarNode, SequenceNode
from yaml.resolver import Resolver

from trace_bench._util.errors import ConfigError

MAX_BYTES = 256 * 1024
MAX_DEPTH = 64
MAX_NODES = 200_000
MAX_CHARS = 4 * MAX_BYTES
_MERGE_TAG = "tag:yaml.org,2002:merge"


def _format_path(path: list[str | int]) -> str | None:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out or None


class _BoundedComposer(Composer):  # type: ignore[misc]  # PyYAML ships no types
    """Composer hooks: a path stack for messages, depth and expanded-size bounds, duplicate keys."""

    def _init_bounds(self) -> None:
        self._path: list[str | int] = []
        self._depth = 0
        self._weights: dict[int, tuple[int, int]] = {}  # id(node) -> (values, characters) once expanded

    def compose_node(self, parent: Node | None, index: Any) -> Node:
        step: str | int | None = None
        if isinstance(parent, SequenceNode) and isinstance(index, int):
            step = index
        elif isinstance(parent, MappingNode) and isinstance(index, ScalarNode):
            step = index.value
        if step is not None:
            self._path.append(step)
        self._depth += 1
        try:
            if self._depth > MAX_DEPTH:
                raise ConfigError(f"the config nests deeper than {MAX_DEPTH} levels",
                                  key_path=_format_path(self._path[:8]), hint="a config is a few levels of mappings")
            if self.check_event(AliasEvent):
                target = self.anchors.get(self.peek_event().anchor)
                if target is not None and id(target) not in self._weights:
                    raise ConfigError("an alias refers to a value that contains it (a recursive structure)",
                                      key_path=_format_path(self._path), hint="a config must be a tree")
            node = super().compose_node(parent, index)
            self._account(node)
        finally:
            self._depth -= 1
            if step is not None:
                self._path.pop()
        return node

    def compose_mapping_node(self, anchor: str | None) -> Node:
        start_event: MappingStartEvent = self.get_event()
        tag = start_event.tag
        if tag is None or tag == "!":
            tag = self.resolve(MappingNode, None, start_event.implicit)
        node = MappingNode(tag, [], start_event.start_mark, None, flow_style=start_event.flow_style)
        if anchor is not None:
            self.anchors[anchor] = node
        first_lines: dict[tuple[str, str], int] = {}
        while not self.check_event(MappingEndEvent):
            key = self.compose_node(node, None)
            if isinstance(key, ScalarNode) and key.tag != _MERGE_TAG:
                identity = (key.tag, key.value)
                line = key.start_mark.line + 1
                if identity in first_lines:
                    raise ConfigError(f"duplicate key '{key.value}' on lines {first_lines[identity]} and {line}",
                                      key_path=_format_path(self._path), hint="give each key once")
                first_lines[identity] = line
            value = self.compose_node(node, key)
            node.value.append((key, value))
        node.end_mark = self.get_event().end_mark
        return node

    def _account(self, node: Node) -> None:
        """Record the node's expanded weight; an alias reuses a node whose weight is already known."""
        if id(node) in self._weights:
            values, chars = self._weights[id(node)]
        elif isinstance(node, ScalarNode):
            values, chars = 1, len(node.value)
        else:
            children: list[Node] = ([n for pair in node.value for n in pair] if isinstance(node, MappingNode)
                                    else list(node.value))
            values, chars = 1, 0
            for child in children:
                child_values, child_chars = self._weights[id(child)]
                values += child_values
                chars += child_chars
        self._weights[id(node)] = (values, chars)
        if values > MAX_NODES or chars > MAX_CHARS:
            raise ConfigError(f"the config expands to more than {MAX_NODES:,} values or {MAX_CHARS:,} characters "
                              "(YAML aliases are expanded)", key_path=_format_path(self._path),
                              hint="write the values out, or split the experiment")


class PyBoundedLoader(_BoundedComposer, yaml.SafeLoader):  # type: ignore[misc]
    """PyYAML's pure-Python safe loader with the composer hooks (used when libyaml is missing)."""

    def __init__(self, stream: Any) -> None:
        yaml.SafeLoader.__init__(self, stream)
        self._init_bounds()


LOADERS: list[type] = [PyBoundedLoader]

if getattr(yaml, "__with_libyaml__", False):
    from yaml._yaml import CParser

    class CBoundedLoader(_BoundedComposer, CParser, SafeConstructor, Resolver):  # type: ignore[misc]
        """libyaml's event parser, the composer hooks, PyYAML's safe constructor and resolver."""

        def __init__(self, stream: Any) -> None:
            CParser.__init__(self, stream)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)
            self._init_bounds()

    LOADERS.insert(0, CBoundedLoader)

BoundedLoader = LOADERS[0]


def load_bounded(text: str) -> Any:
    """Parse one YAML (or JSON) document with the bounds above; YAML errors propagate as yaml.YAMLError."""
    if len(text.encode("utf-8", errors="replace")) > MAX_BYTES:
        raise ConfigError(f"the config is larger than {MAX_BYTES // 1024} KB",
                          hint="a config lists tasks, trainers and settings; data belongs in task files")
    loader = BoundedLoader(text)
    try:
        return loader.get_single_data()
    finally:
        loader.dispose()

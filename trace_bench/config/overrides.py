"""Command-line overrides of a config: ``--set key.path=value``, ``--seeds``, ``--model``, ``--mode``
and ``--budget``, applied to the loaded YAML document before it is validated.

Every override is kept as the two strings a user typed (``("--set", "budget.llm_calls=5")``), so a
run can record them (in its config snapshot) and a resume can apply them again; parsing turns
them into a key path and a value.  The shortcut flags are ``--set`` with a fixed key:

- ``--seeds 1,2,3`` sets ``seeds`` to a list of seed values: commas and/or spaces between them,
  optional brackets, and inclusive ranges ``1-5`` or ``1..5``.  ``--seeds 3`` is the one seed 3
  (as ``seed: 3`` is in a config), never "three seeds": write ``--seeds 1-3`` for those.
- ``--model NAME`` sets ``llm.model`` (the text as given, not YAML-typed);
- ``--mode stub|real`` sets ``mode``;
- ``--budget KEY=VALUE[,KEY=VALUE]`` sets ``budget.KEY`` (``llm_calls``, ``tokens``, ``usd``, ``wall_s``, ``evaluations``).

``--set`` values are YAML (``5`` is a number, ``true`` a boolean, ``[1, 2]`` a list, ``null``
removes a setting, quotes keep a string); a path part that is a whole number indexes a list
(``tasks.0.eval_kwargs.target=3``, ``-1`` the last entry), and missing mappings on the way are
created.  A task or trainer given as a bare id becomes ``{id: ...}`` when a path goes below it.
Setting one spelling of a key replaces its other spellings (``seed`` by ``seeds``, ``runs_root``
by ``runs_dir``), so an override never collides with the file's alias.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from trace_bench._util.errors import ConfigError, shorten

#: the flags that override a config, in the form ``run``/``validate`` accept them
FLAGS = ("--set", "--seeds", "--model", "--mode", "--budget")
MODES = ("stub", "real")

#: other spellings of a top-level key (the config's aliases), replaced when one of them is set
_SPELLINGS = (("seeds", "seed"), ("runs_dir", "runs_root", "runs-dir"),
              ("max_workers", "n_concurrent", "n-concurrent", "max-workers"), ("job_timeout", "job-timeout"),
              ("fail_fast", "fail-fast"), ("job_memory_mb", "job-memory-mb"), ("trainer_kwargs",),
              ("tasks",), ("trainers",))
_ID_LISTS = ("tasks", "trainers")
_SEED_RANGE = re.compile(r"(\d+)(?:-|\.\.)(\d+)")
_SEED = re.compile(r"-?\d+")
_MAX_RANGE = 100_000

SEEDS_EXAMPLE = "e.g. --seeds 1,2,3 (three seeds), --seeds 1-5 (five), --seeds 7 (the one seed 7)"


@dataclass(frozen=True)
class Override:
    """One override: the flag and text a user typed, and the key path and value they set."""

    flag: str
    text: str
    path: tuple[str | int, ...]
    value: Any

    @property
    def typed(self) -> str:
        """The override as typed on a command line (what errors and the snapshot show)."""
        return f"{self.flag} {self.text}"

    @property
    def key(self) -> str:
        return format_path(self.path)


def format_path(path: Iterable[str | int]) -> str:
    """``("tasks", 0, "id")`` -> ``tasks[0].id`` (the key-path form of config errors)."""
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else str(part))
    return out


def _error(flag: str, text: str, reason: str, hint: str | None = None) -> ConfigError:
    return ConfigError(reason, key_path=f"{flag} {shorten(text, 200)}", hint=hint)


def parse_seeds(text: str, flag: str = "--seeds") -> list[int]:
    """The seeds of ``--seeds`` text (see the module docstring); ConfigError with an example."""
    items = [item for item in re.split(r"[\s,]+", text.strip().strip("[]").strip()) if item]
    if not items:
        raise _error(flag, text, "no seed given", SEEDS_EXAMPLE)
    seeds: list[int] = []
    for item in items:
        span = _SEED_RANGE.fullmatch(item)
        if span:
            low, high = int(span.group(1)), int(span.group(2))
            if high < low or high - low >= _MAX_RANGE:
                raise _error(flag, text, f"the range {item} must go up, with at most {_MAX_RANGE:,} seeds",
                             SEEDS_EXAMPLE)
            seeds.extend(range(low, high + 1))
        elif _SEED.fullmatch(item):
            seeds.append(int(item))
        else:
            raise _error(flag, text, f"{item!r} is not a seed (a whole number) or a range of seeds", SEEDS_EXAMPLE)
    if len(set(seeds)) != len(seeds):
        raise _error(flag, text, "a seed is given twice", SEEDS_EXAMPLE)
    return seeds


def _yaml_value(flag: str, text: str, value_text: str) -> Any:
    from trace_bench.config.safe_yaml import load_bounded

    if not value_text.strip():
        return None
    try:
        return load_bounded(value_text)
    except ConfigError as exc:
        raise _error(flag, text, exc.reason) from None
    except Exception as exc:  # yaml.YAMLError: the value is not YAML
        problem = getattr(exc, "problem", None) or "not a YAML value"
        raise _error(flag, text, f"the value is not valid YAML: {problem}",
                     "quote a string that holds ':' or '#': --set 'key=\"a: b\"'") from None


def _key_path(flag: str, text: str, key: str) -> tuple[str | int, ...]:
    parts = key.split(".")
    if not key or any(not part.strip() for part in parts):
        raise _error(flag, text, f"{key!r} is not a key path", "write KEY.PATH=VALUE, e.g. --set budget.llm_calls=5")
    return tuple(int(part) if re.fullmatch(r"-?\d+", part) else part.strip() for part in parts)


def parse_override(flag: str, text: str) -> list[Override]:
    """The overrides one flag stands for (``--budget`` may set several keys); ConfigError naming the
    flag when the text has no meaning."""
    if flag == "--seeds":
        return [Override(flag, text, ("seeds",), parse_seeds(text, flag))]
    if flag == "--model":
        if not text.strip():
            raise _error(flag, text, "no model given", "e.g. --model gpt-4o-mini")
        return [Override(flag, text, ("llm", "model"), text.strip())]
    if flag == "--mode":
        if text.strip() not in MODES:
            raise _error(flag, text, f"mode must be {' or '.join(MODES)}")
        return [Override(flag, text, ("mode",), text.strip())]
    if flag == "--budget":
        return _parse_budget(text)
    if flag == "--set":
        key, equals, value_text = text.partition("=")
        if not equals:
            raise _error(flag, text, "expected KEY.PATH=VALUE", "e.g. --set budget.llm_calls=5 or "
                         "--set tasks.0.eval_kwargs.target=3")
        path = _key_path(flag, text, key.strip())
        value = _yaml_value(flag, text, value_text)
        if path in (("seeds",), ("seed",)) and isinstance(value, str):  # --set seeds=1,2: the --seeds forms
            value = parse_seeds(value, flag)
        return [Override(flag, text, path, value)]
    raise _error(flag, text, f"unknown override flag (known: {', '.join(FLAGS)})")


def _parse_budget(text: str) -> list[Override]:
    pairs = [pair.strip() for pair in text.split(",") if pair.strip()]
    # the keys are BudgetConfig's (config/models.py validates them; importing it here would close a cycle
    # through config/messages.py): tests/config/test_overrides.py checks the hint names every one
    hint = ("e.g. --budget llm_calls=20 or --budget tokens=50000,usd=0.5 "
            "(keys: llm_calls, tokens, usd, wall_s, evaluations)")
    if not pairs:
        raise _error("--budget", text, "no budget given", hint)
    overrides = []
    for pair in pairs:
        key, equals, value_text = pair.partition("=")
        if not equals or not key.strip():
            raise _error("--budget", text, f"expected KEY=VALUE, got {pair!r}", hint)
        overrides.append(Override("--budget", text, ("budget", key.strip()), _yaml_value("--budget", text, value_text)))
    return overrides


def parse_overrides(pairs: Sequence[tuple[str, str]] | None) -> list[Override]:
    """Every override of ``pairs`` (flag, text), in the order given."""
    return [override for flag, text in pairs or () for override in parse_override(flag, text)]


def apply_overrides(data: Any, overrides: Sequence[Override]) -> Any:
    """A copy of the config document ``data`` with ``overrides`` applied in order (``data`` is left
    alone); ConfigError naming the override when its path cannot be followed."""
    if not overrides:
        return data
    if data is None:
        data = {}
    if not isinstance(data, dict):
        raise ConfigError(f"the top level must be a mapping of keys, got {type(data).__name__}")
    document = copy.deepcopy(data)
    for override in overrides:
        _set(document, override)
    return document


def _set(document: dict[str, Any], override: Override) -> None:
    node: Any = document
    path = override.path
    for depth, part in enumerate(path):
        last = depth == len(path) - 1
        where = format_path(path[:depth]) or "the top level"
        if isinstance(node, list):
            if not isinstance(part, int):
                raise _error(override.flag, override.text, f"{where} is a list: index it with a number "
                             f"(0 to {len(node) - 1}), not {part!r}")
            if not -len(node) <= part < len(node):
                raise _error(override.flag, override.text, f"{where} has {len(node)} "
                             f"entr{'y' if len(node) == 1 else 'ies'}; index {part} is out of range")
            if last:
                node[part] = override.value
                return
            if depth == 1 and path[0] in _ID_LISTS and isinstance(node[part], str):
                node[part] = {"id": node[part]}
            node = node[part]
            continue
        if not isinstance(node, dict):
            raise _error(override.flag, override.text, f"{where} is {type(node).__name__} {shorten(repr(node), 60)}, "
                         f"not a mapping: nothing below it can be set")
        key = str(part)
        if depth == 0:
            _drop_other_spellings(node, key)
        if last:
            node[key] = override.value
            return
        child = node.get(key)
        if child is None:
            child = node[key] = {}
        node = child


def _drop_other_spellings(top: dict[str, Any], key: str) -> None:
    for spellings in _SPELLINGS:
        if key in spellings:
            for other in spellings:
                if other != key:
                    top.pop(other, None)
            return


def blame(error: ConfigError, overrides: Sequence[Override]) -> ConfigError:
    """``error`` (from validating an overridden config) attributed to the last override whose key
    path it concerns, naming that override instead of the file; unchanged when none does."""
    where = error.key_path or ""
    if not where or where.startswith("--"):
        return error
    for override in reversed(overrides):
        key = override.key
        alias = _alias_key(override)
        if any(where == k or where.startswith((k + ".", k + "[")) or k.startswith((where + ".", where + "["))
               for k in (key, alias) if k):
            return ConfigError(f"{where}: {error.reason}", key_path=override.typed, hint=error.hint)
    return error


def _alias_key(override: Override) -> str | None:
    """The key path validation reports for an override of a top-level alias (``seed`` -> ``seeds``)."""
    first = override.path[0]
    for spellings in _SPELLINGS:
        if first in spellings and first != spellings[0]:
            return format_path((spellings[0], *override.path[1:]))
    return None


def snapshot_header(overrides: Sequence[tuple[str, str]], source: str | None) -> str:
    """The comment lines at the top of a run's config snapshot: what it is and, one per line, the
    overrides it was resolved with, then the same list as JSON on a ``# overrides:`` line that
    :func:`read_snapshot_header` reads back."""
    import json

    lines = ["# The resolved config of this run: every default filled in" +
             (f"; from {source}" if source else "") + "."]
    if overrides:
        lines.append("# Command-line overrides applied to it, in this order (config_hash covers them):")
        lines += [f"#   {flag} {text}" for flag, text in overrides]
        lines.append("# overrides: " + json.dumps([[flag, text] for flag, text in overrides]))
    return "\n".join(lines) + "\n"


def read_snapshot_header(text: str) -> list[tuple[str, str]]:
    """The overrides a snapshot's header records (:func:`snapshot_header`); [] when it has none."""
    import json

    for line in text.splitlines():
        if not line.startswith("#"):
            break
        if line.startswith("# overrides: "):
            try:
                pairs = json.loads(line[len("# overrides: "):])
            except ValueError:
                return []
            return [(str(flag), str(value)) for flag, value in pairs if str(flag) in FLAGS] \
                if isinstance(pairs, list) and all(isinstance(p, list) and len(p) == 2 for p in pairs) else []
    return []

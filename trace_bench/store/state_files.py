"""``artifacts/<kind>_state.yaml`` (and its ``.json`` twin): the parameters of the job's initial,
best and final states, rewritten by the job process as it goes.

The YAML file is the one read back; the JSON copy is for the original Trace-Bench's readers.  Both
are replaced atomically and not fsync'd (they are rewritten as the job goes).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from trace_bench.store import jsonio
from trace_bench.store.atomic import write_json, write_text
from trace_bench.store.models import StateFile, StoreError

STATE_KINDS = ("initial", "best", "final")

# libyaml's emitter writes the same text as the pure-Python one, five times faster; its parser
# reads it into the same values (the constructor is the same SafeConstructor) as fast again
_YAML_DUMPER: Any = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
_YAML_LOADER: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def write_state(yaml_path: Path, json_path: Path, state: StateFile) -> None:
    """The state as YAML at ``yaml_path`` and as JSON at ``json_path`` (``schema_version`` last, no
    ``step`` when it has none, non-finite numbers as null)."""
    data = jsonio.finite(state.model_dump(mode="json"))
    version = data.pop("schema_version")
    if data.get("step") is None:
        data.pop("step", None)
    data["schema_version"] = version
    write_text(yaml_path, yaml.dump(data, Dumper=_YAML_DUMPER, sort_keys=False, allow_unicode=True), durable=False)
    write_json(json_path, data, durable=False)


def read_state(path: Path) -> StateFile | None:
    """The state at ``path``; None when there is none, :class:`StoreError` when it cannot be read."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise StoreError(f"{path}: cannot be read ({exc})") from None
    try:
        data = yaml.load(text, Loader=_YAML_LOADER)  # noqa: S506 - a safe loader
    except yaml.YAMLError as exc:
        raise StoreError(f"{path}: not valid YAML ({str(exc).splitlines()[0]})") from None
    return StateFile.load(data, source=path)

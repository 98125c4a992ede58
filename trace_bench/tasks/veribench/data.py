"""Where VeriBench rows come from: a local file/directory, else the HuggingFace dataset.

A *row* has the fields of ``allenanie/veribench_with_prompts`` (train split):

- ``user_query`` (required): the task, usually a Python program to translate to Lean 4;
- ``filename`` (the task name is the file name without its extension), ``category``,
  ``system_prompt``;
- ``unit_tests`` (ours, optional): Lean source appended after the candidate; every top-level
  ``example``/``theorem``/``lemma``/``#guard``/``#eval`` in it is one test.

Local data (``eval_kwargs.data_dir`` or env ``TRACE_BENCH_VERIBENCH_ROOT``) is a ``.jsonl`` file
(one row per line), a ``.json`` file (a list of rows, or ``{"rows"|"train": [...]}``), or a
directory holding ``veribench.jsonl``/``veribench.json`` or one ``.json`` row per file
(``task_0.json`` ...).  The HF dataset is used only when no local data is given, and only at job or
expansion time (never for listing); ``HF_HUB_OFFLINE=1`` limits it to the local cache.
"""

from __future__ import annotations

import json
import os
import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any

from trace_bench._util.errors import TraceBenchError

HF_DATASET = "allenanie/veribench_with_prompts"
ROOT_ENV = "TRACE_BENCH_VERIBENCH_ROOT"


class VeriBenchDataError(TraceBenchError, ValueError):
    """The VeriBench data could not be found or read; the message says how to provide it."""


@dataclass(frozen=True)
class Row:
    index: int
    name: str
    user_query: str
    category: str = ""
    system_prompt: str = ""
    unit_tests: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False)


def _name(raw: dict[str, Any], index: int) -> str:
    filename = str(raw.get("filename") or raw.get("name") or "").strip()
    stem = Path(filename).stem if filename else ""
    clean = re.sub(r"[^A-Za-z0-9_.-]+", "_", stem).strip("_")
    return clean or f"task_{index}"


def to_rows(records: list[dict[str, Any]], source: str) -> list[Row]:
    rows: list[Row] = []
    seen: set[str] = set()
    for index, raw in enumerate(records):
        if not isinstance(raw, dict) or not str(raw.get("user_query") or "").strip():
            raise VeriBenchDataError(f"{source}: row {index} has no 'user_query'")
        name = _name(raw, index)
        if name in seen:
            name = f"{name}_{index}"
        seen.add(name)
        known = ("user_query", "filename", "name", "category", "system_prompt", "unit_tests")
        rows.append(Row(index=index, name=name, user_query=str(raw["user_query"]), category=str(raw.get("category") or ""),
                        system_prompt=str(raw.get("system_prompt") or ""), unit_tests=str(raw.get("unit_tests") or ""),
                        extra={k: v for k, v in raw.items() if k not in known}))
    return rows


def _read_json(path: Path) -> list[dict[str, Any]]:
    if path.suffix == ".jsonl":
        return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    data = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(data, dict):
        data = data.get("rows", data.get("train", [data]))
    if not isinstance(data, list):
        raise VeriBenchDataError(f"{path}: expected a list of rows")
    return data


def _task_order(path: Path) -> tuple[int, str]:
    match = re.search(r"(\d+)$", path.stem)
    return (int(match.group(1)) if match else 1 << 30, path.name)


@lru_cache(maxsize=8)
def _local_rows(location: str) -> tuple[Row, ...]:
    path = Path(location).expanduser()
    if not path.exists():
        raise VeriBenchDataError(f"VeriBench data not found at {path}")
    try:
        if path.is_file():
            return tuple(to_rows(_read_json(path), str(path)))
        for name in ("veribench.jsonl", "veribench.json"):
            if (path / name).is_file():
                return tuple(to_rows(_read_json(path / name), str(path / name)))
        files = sorted((p for p in path.iterdir() if p.suffix in (".json", ".jsonl")), key=_task_order)
        records = [record for file in files for record in _read_json(file)]
    except (OSError, ValueError) as exc:
        raise VeriBenchDataError(f"cannot read VeriBench data at {path}: {exc}") from exc
    if not records:
        raise VeriBenchDataError(f"no .json/.jsonl rows under {path}")
    return tuple(to_rows(records, str(path)))


def local_location(data_dir: str | None = None) -> str | None:
    return data_dir or os.environ.get(ROOT_ENV) or None


def hf_cached() -> bool:
    """Whether the HF dataset looks present in the local datasets cache (no import, no network)."""
    home = os.environ.get("HF_DATASETS_CACHE") or os.path.join(
        os.environ.get("HF_HOME") or os.path.join(Path.home(), ".cache", "huggingface"), "datasets")
    return (Path(home) / HF_DATASET.replace("/", "___")).is_dir()


def _hf_rows() -> tuple[Row, ...]:
    try:
        from datasets import load_dataset
    except ImportError as exc:
        raise VeriBenchDataError(f"no local VeriBench data: set {ROOT_ENV} or eval_kwargs.data_dir "
                                 "(or install trace-bench[hf] to use the HF dataset)") from exc
    try:
        records = [dict(r) for r in load_dataset(HF_DATASET, split="train")]
    except Exception as exc:  # offline, no cache, gated: one clear message
        raise VeriBenchDataError(f"cannot load {HF_DATASET} ({type(exc).__name__}: {exc}); set {ROOT_ENV} or "
                                 "eval_kwargs.data_dir to a local copy") from exc
    return tuple(to_rows(records, HF_DATASET))


def load_rows(data_dir: str | None = None) -> list[Row]:
    location = local_location(data_dir)
    return list(_local_rows(location) if location else _hf_rows())


def find_row(rows: list[Row], name: str) -> Row:
    """A row by name, ``task_<i>`` or bare index."""
    for row in rows:
        if row.name == name:
            return row
    match = re.fullmatch(r"(?:task_)?(\d+)", name)
    if match and int(match.group(1)) < len(rows):
        return rows[int(match.group(1))]
    raise VeriBenchDataError(f"no VeriBench task named {name!r} ({len(rows)} tasks)")

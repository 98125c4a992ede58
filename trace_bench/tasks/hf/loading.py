"""Loading rows: the hub route and the local-file route, then seeded, disjoint partitions.

Both routes return ``datasets.Dataset`` objects with the dataset's own row schema, so the row and
metric code never knows where the rows came from.  The local route (``data_files``) exists for
machines without the hub; it is the same ``load_dataset`` call with the ``json``/``parquet``/
``csv`` builder.  Subsets are a seeded shuffle of row indices, sliced: train, then validation,
then test when they share a split, so the partitions never overlap.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from trace_bench._util.errors import TraceBenchError
from trace_bench.tasks.hf.catalog import NOT_CACHED, HFDataset, hub_offline, is_cached

T = TypeVar("T")

_FORMATS = {".json": "json", ".jsonl": "json", ".parquet": "parquet", ".csv": "csv"}


class DataUnavailable(TraceBenchError, RuntimeError):
    """The rows cannot be loaded here; the message says how to make them available."""


def _builder_for(path: str) -> str:
    suffixes = [s for s in Path(path).suffixes if s != ".gz"]
    fmt = _FORMATS.get(suffixes[-1].lower() if suffixes else "")
    if fmt is None:
        raise DataUnavailable(f"cannot tell the format of {path!r}: use .json, .jsonl, .parquet or .csv")
    return fmt


def local_file(data_files: str | Mapping[str, str], split: str, task: str) -> str:
    """The file holding ``split``: one path serves every split, a mapping names one per split."""
    if isinstance(data_files, Mapping):
        if split not in data_files:
            raise DataUnavailable(f"{task}: data_files has no entry for split '{split}' "
                                  f"(it has {', '.join(sorted(data_files)) or 'none'})")
        path = str(data_files[split])
    else:
        path = str(data_files)
    if not Path(path).expanduser().exists():
        raise DataUnavailable(f"{task}: data file {path!r} for split '{split}' does not exist")
    return str(Path(path).expanduser())


def load_split(entry: HFDataset, split: str, *, task: str, data_files: str | Mapping[str, str] | None = None,
               cache_dir: str | None = None) -> Any:
    """One split as a ``datasets.Dataset``; raises :class:`DataUnavailable` with a fix when it cannot."""
    import datasets

    if data_files:
        path = local_file(data_files, split, task)
        bars = datasets.utils.logging.is_progress_bar_enabled()
        datasets.utils.logging.disable_progress_bar()  # a few local rows: no progress noise in job logs
        try:
            return datasets.load_dataset(_builder_for(path), data_files={split: path}, split=split,
                                         cache_dir=cache_dir)
        finally:
            if bars:
                datasets.utils.logging.enable_progress_bar()
    if hub_offline() and not is_cached(entry, cache_dir):
        raise DataUnavailable(
            f"{task}: {NOT_CACHED}. The hub is offline (HF_HUB_OFFLINE/HF_DATASETS_OFFLINE) and "
            f"{entry.dataset_id} is not in the datasets cache. Set eval_kwargs.data_files to local "
            "files with the dataset's row schema (a path, or {split: path}), or run where the hub is "
            "reachable."
        )
    try:
        return datasets.load_dataset(entry.dataset_id, entry.dataset_config, split=split, cache_dir=cache_dir)
    except Exception as exc:  # ConnectionError, OfflineModeIsEnabled, missing split, ...
        raise DataUnavailable(
            f"{task}: loading {entry.dataset_id}"
            f"{f' ({entry.dataset_config})' if entry.dataset_config else ''} split '{split}' failed: "
            f"{type(exc).__name__}: {exc}. Set eval_kwargs.data_files to local files, or go online."
        ) from exc


def shuffled_indices(n_rows: int, *, seed: int, salt: str) -> list[int]:
    """A permutation of ``range(n_rows)`` fixed by (seed, salt); string seeds are hash-seed independent."""
    order = list(range(n_rows))
    random.Random(f"{seed}|{salt}").shuffle(order)
    return order


def partition(sizes: Mapping[str, int], splits: Mapping[str, str], rows: Mapping[str, Any], *, seed: int,
              salt: str, convert: Callable[[dict[str, Any]], T | None]) -> tuple[dict[str, list[T]], int]:
    """Examples per partition (train/validate/test) and how many rows were skipped.

    ``splits`` maps a partition to its dataset split and ``rows`` a split to its rows.  Each split is
    walked in one seeded order; partitions of the same split take consecutive stretches of it, so they
    are disjoint.  ``convert`` returns None for rows that cannot be scored (no gold), which are skipped.
    A partition gets fewer examples than asked only when its split runs out.
    """
    cursor: dict[str, int] = {}
    orders: dict[str, list[int]] = {}
    chosen: dict[str, list[T]] = {}
    skipped = 0
    for part in ("train", "validate", "test"):
        split = splits[part]
        if int(sizes[part]) <= 0:  # a split nobody asks rows from is never loaded
            chosen[part] = []
            continue
        if split not in orders:
            orders[split] = shuffled_indices(len(rows[split]), seed=seed, salt=f"{salt}|{split}")
            cursor[split] = 0
        wanted, picked = max(0, int(sizes[part])), list[T]()
        order, position = orders[split], cursor[split]
        while len(picked) < wanted and position < len(order):
            example = convert(rows[split][order[position]])
            position += 1
            if example is None:
                skipped += 1
            else:
                picked.append(example)
        cursor[split] = position
        chosen[part] = picked
    return chosen, skipped

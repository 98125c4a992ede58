"""Which config may continue an existing run, and the config hash of a run grown by a larger one.

A run is continued (``--resume RUN``, or a config whose fixed ``run_id`` names an existing run)
with the config it was started with, or with one that only *extends its matrix*: the same config
except for ``tasks``, ``trainers`` (with their params variants) and ``seeds``.  The new matrix's
finished jobs are reused, its new cells run, and the cells of the earlier config that the new one
lacks stay in the run (manifest, results.csv) as they are.  Anything else that changed (mode, LLM,
budget, global trainer or eval kwargs, ...) would mix incomparable jobs in one run's tables, so
it is refused with a message naming both hashes.

The run's ``config_hash`` covers the union: it is the hash of the ordered list of the hashes of
every config that contributed (``Manifest.config_hashes``); a run never extended keeps its one
config's hash.  ``meta/config.snapshot.yaml`` holds the latest config.

Extensions never pool different tasks (:func:`pooled_tasks`): every table pairs and ranks by task
label, so a task label that the run holds with one set of ``eval_kwargs`` and the new config gives
another (``target: 3`` then ``target: 50``), or one (task, eval_kwargs) that would be named by two
labels, is refused (exit 2) with a message that says why; the same holds for ``--force`` with an
edited config, which extends the run the same way.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, Protocol

from trace_bench.config.models import RUN_LOCAL_FIELDS, RunConfig, parse_config
from trace_bench.matrix.identity import config_hash, sha256
from trace_bench.store.models import Manifest

#: the config keys a run may grow along
MATRIX_AXES = ("tasks", "trainers", "seeds")


@dataclass(frozen=True)
class Admission:
    """How a config continues a run: the run's config hash and its contributing hashes."""

    digest: str
    hashes: list[str]
    extended: bool = False


def frame_hash(config: RunConfig) -> str:
    """Hash of everything but the run-local fields and the matrix axes."""
    return sha256(config.model_dump(mode="json", exclude={*RUN_LOCAL_FIELDS, *MATRIX_AXES}))


def combined_hash(hashes: list[str]) -> str:
    return hashes[0] if len(hashes) == 1 else sha256({"config_hashes": hashes})


def admit(config: RunConfig, manifest: Manifest | None, snapshot: object) -> Admission | None:
    """The admission of ``config`` to a run with ``manifest`` and config ``snapshot`` (its stored
    config), or None when the config changes more than the matrix axes."""
    digest = config_hash(config)
    if manifest is None or manifest.validated_only:
        return Admission(digest, [digest])
    hashes = list(manifest.config_hashes) or [manifest.config_hash]
    if digest in hashes or digest == manifest.config_hash:
        return Admission(manifest.config_hash, hashes)
    try:
        earlier = parse_config(snapshot) if isinstance(snapshot, dict) else None
    except ValueError:
        earlier = None
    if earlier is None or frame_hash(earlier) != frame_hash(config):
        return None
    hashes.append(digest)
    return Admission(combined_hash(hashes), hashes, extended=True)


class TaskCell(Protocol):
    """What :func:`pooled_tasks` reads of a job's specification (``JobSpec`` has it)."""

    @property
    def task(self) -> str: ...
    @property
    def task_label(self) -> str: ...
    @property
    def eval_kwargs(self) -> dict[str, Any]: ...


def _kwargs_text(eval_kwargs: dict[str, Any]) -> str:
    return json.dumps(eval_kwargs, sort_keys=True, default=str)


def pooled_tasks(existing: Iterable[TaskCell], jobs: Iterable[TaskCell]) -> list[str]:
    """Why adding ``jobs`` to a run that holds ``existing`` would pool different tasks (empty: it would
    not): a task label held with other ``eval_kwargs``, or a (task, eval_kwargs) the run names by
    another label.  Each reason is one sentence naming both."""
    by_label: dict[str, str] = {}
    by_task: dict[tuple[str, str], str] = {}
    for spec in existing:
        kwargs = _kwargs_text(spec.eval_kwargs)
        by_label.setdefault(spec.task_label or spec.task, kwargs)
        by_task.setdefault((spec.task, kwargs), spec.task_label or spec.task)
    reasons: list[str] = []
    for spec in jobs:
        label, kwargs = spec.task_label or spec.task, _kwargs_text(spec.eval_kwargs)
        held = by_label.get(label)
        named = by_task.get((spec.task, kwargs))
        if held is not None and held != kwargs:
            reason = (f"task '{label}' is in the run with eval_kwargs {held}, and this config gives it {kwargs}: "
                      "two different tasks would be pooled under one label (their seeds paired as one task)")
        elif named is not None and named != label:
            reason = (f"task {spec.task} with eval_kwargs {kwargs} is in the run as '{named}', and this config "
                      f"names it '{label}' (it adds another eval_kwargs variant): one task would be split in two")
        else:
            continue
        if reason not in reasons:
            reasons.append(reason)
    return reasons

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
"""

from __future__ import annotations

from dataclasses import dataclass

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

"""The run's meta records: config snapshot and manifest (the expanded matrix with each job's state)."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import yaml

from trace_bench.config.models import RunConfig
from trace_bench.store.events import utc_now
from trace_bench.store.models import RESOLVED_FIELDS, JobResult, JobSpec, Manifest, ManifestJob, Resolution
from trace_bench.store.models.spec import RESOLVED_PREFIX
from trace_bench.store.results_index import LazyResult
from trace_bench.store.status import PlanState, Status


def snapshot_text(config: RunConfig, overrides: Sequence[tuple[str, str]] = (), source: str | None = None) -> str:
    """``meta/config.snapshot.yaml``: the validated config, every default filled in, under a header
    that names its ``source`` file and lists the command-line ``overrides`` it was resolved with
    (a comment, so the snapshot loads as the config it is; a resume reads the overrides back)."""
    from trace_bench.config.overrides import snapshot_header

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's: a 100,000-seed config dumps 10x faster
    body: str = yaml.dump(config.model_dump(mode="json"), Dumper=dumper, sort_keys=False, allow_unicode=True)
    return snapshot_header(overrides, source) + body


def manifest_entry(spec: JobSpec, status: Status | PlanState = PlanState.PENDING) -> ManifestJob:
    return ManifestJob(spec=spec, status=status, resolved=Resolution.planned(spec))


def _arm_key(spec: JobSpec) -> tuple[Any, ...]:
    """Jobs of one arm share their mappings (the matrix builds them once per arm), so identity tells
    arms apart without hashing their contents; the specs stay alive while the key is used."""
    return (spec.task, spec.suite, spec.trainer, spec.params_label, spec.optimizer, spec.logger, spec.skip_reason,
            spec.mode, spec.task_root, spec.sandbox, id(spec.params), id(spec.eval_kwargs), id(spec.trainer_kwargs),
            id(spec.optimizer_kwargs), id(spec.llm), id(spec.llm_identity), id(spec.budget))


def _resolved(record: JobResult | LazyResult) -> dict[str, Any]:
    """The ``resolved_*`` keys of a job's record (a LazyResult: one plain parse)."""
    if isinstance(record, LazyResult):
        return record.fields(RESOLVED_FIELDS)
    return {RESOLVED_PREFIX + name: value for name, value in record.resolved.model_dump(mode="json").items()}


def manifest_entries(jobs: list[JobSpec], statuses: dict[str, str], *,
                     records: dict[str, JobResult | LazyResult] | None = None,
                     carried: list[ManifestJob] | None = None) -> Iterator[dict[str, Any]]:
    """The manifest's job entries as JSON-ready dicts (what ``ManifestJob`` writes), in matrix order,
    then ``carried`` (see :func:`build_manifest`); each arm's entry is dumped once and its seeds
    differ only in their own keys, so a 100,000-job matrix streams quickly."""
    missing = str(PlanState.NOT_EXECUTED if statuses else PlanState.PENDING)
    records = records or {}
    arms: dict[tuple[Any, ...], dict[str, Any]] = {}
    for spec in jobs:
        key = _arm_key(spec)
        arm = arms.get(key)
        if arm is None:
            arm = arms[key] = manifest_entry(spec).model_dump(mode="json")
        entry = {**arm, "job_id": spec.job_id, "index": spec.index, "seed": spec.seed,
                 "status": str(statuses.get(spec.job_id, missing))}
        if spec.job_id in records:
            entry.update(_resolved(records[spec.job_id]))
        yield entry
    for carried_entry in carried or []:
        update: dict[str, Any] = {"status": str(statuses.get(carried_entry.job_id, missing))}
        if carried_entry.job_id in records:
            update.update(_resolved(records[carried_entry.job_id]))
        yield {**carried_entry.model_dump(mode="json"), **update}


def manifest_head(meta: dict[str, Any], config_hashes: list[str] | None = None) -> Manifest:
    """The manifest without its jobs (they are streamed by :func:`manifest_entries`)."""
    return Manifest(**meta, generated_at=utc_now(), config_hashes=list(config_hashes or []), jobs=[])


def build_manifest(meta: dict[str, Any], jobs: list[JobSpec], statuses: dict[str, str], *,
                   records: dict[str, JobResult | LazyResult] | None = None, carried: list[ManifestJob] | None = None,
                   config_hashes: list[str] | None = None) -> Manifest:
    """The manifest of a run: every job ``pending`` at the start, its status (``reused``,
    ``not_executed``) at the end.  A job with a record carries the record's ``resolved_*``, so the
    entry equals its job_meta.json.  ``carried``: entries of an earlier config of an extended run
    that this config's matrix lacks; they stay, after the matrix's own."""
    head = manifest_head(meta, config_hashes)
    entries = [ManifestJob.model_validate(entry) for entry in manifest_entries(jobs, statuses, records=records,
                                                                               carried=carried)]
    return head.model_copy(update={"jobs": entries})

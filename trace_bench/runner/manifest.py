"""The run's meta records: config snapshot and manifest (the expanded matrix with each job's state)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml

from trace_bench.config.models import RunConfig
from trace_bench.matrix.expand import JobSpec
from trace_bench.runner.resolved import default_optimizer, resolved_fields, resolved_of
from trace_bench.store import jsonio
from trace_bench.store.events import utc_now
from trace_bench.store.models import JobResult, Manifest, ManifestJob
from trace_bench.store.status import PlanState


def snapshot_text(config: RunConfig) -> str:
    """``meta/config.snapshot.yaml``: the validated config, every default filled in."""
    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)  # libyaml's: a 100,000-seed config dumps 10x faster
    return yaml.dump(config.model_dump(mode="json"), Dumper=dumper, sort_keys=False, allow_unicode=True)


def manifest_entry(spec: JobSpec, status: str = PlanState.PENDING) -> ManifestJob:
    return ManifestJob.model_validate({**_arm_part(spec), **_job_part(spec, str(status))})


def _arm_part(spec: JobSpec) -> dict[str, Any]:
    """The JSON-ready fields a job shares with the other seeds of its arm, in ManifestJob's order."""
    return jsonio.plain({
        "task": spec.task, "task_label": spec.task_label or spec.task, "suite": spec.suite, "trainer": spec.trainer,
        "params": spec.params,
        "params_label": spec.params_label, "eval_kwargs": spec.eval_kwargs, "raw_params": spec.params,
        "resolved": {"trainer_kwargs": spec.trainer_kwargs, "optimizer": spec.optimizer or default_optimizer(spec.trainer) or None,
                     "optimizer_kwargs": spec.optimizer_kwargs, "logger": spec.logger},
        "llm_identity": spec.llm_identity, **resolved_fields(spec)})


def _job_part(spec: JobSpec, status: str) -> dict[str, Any]:
    return {"job_id": spec.job_id, "index": spec.index, "seed": spec.seed, "status": status,
            "skip_reason": spec.skip_reason}


#: ManifestJob's field order, so a streamed entry reads like a dumped model
_ORDER = tuple(ManifestJob.model_fields)


def _arm_key(spec: JobSpec) -> tuple[Any, ...]:
    """Jobs of one arm share their dicts (the matrix builds them once per arm), so identity tells
    arms apart without hashing their contents; the specs stay alive while the key is used."""
    return (spec.task, spec.suite, spec.trainer, spec.params_label, spec.optimizer, spec.logger, spec.skip_reason,
            id(spec.params), id(spec.eval_kwargs), id(spec.trainer_kwargs), id(spec.optimizer_kwargs),
            id(spec.llm), id(spec.llm_identity))


def manifest_entries(jobs: list[JobSpec], statuses: dict[str, str], *, records: dict[str, JobResult] | None = None,
                     carried: list[ManifestJob] | None = None) -> Iterator[dict[str, Any]]:
    """The manifest's job entries as JSON-ready dicts, in matrix order, then ``carried`` (see
    :func:`build_manifest`); computed once per arm, so a 100,000-job matrix streams quickly."""
    missing = str(PlanState.NOT_EXECUTED if statuses else PlanState.PENDING)
    records = records or {}
    arms: dict[tuple[Any, ...], dict[str, Any]] = {}
    for spec in jobs:
        key = _arm_key(spec)
        arm = arms.get(key)
        if arm is None:
            arm = arms[key] = _arm_part(spec)
        merged = {**arm, **_job_part(spec, str(statuses.get(spec.job_id, missing)))}
        if spec.job_id in records:
            merged.update(jsonio.plain(resolved_of(records[spec.job_id])))
        yield {name: merged[name] for name in _ORDER}
    for entry in carried or []:
        update: dict[str, Any] = {"status": str(statuses.get(entry.job_id, missing))}
        if entry.job_id in records:
            update.update(jsonio.plain(resolved_of(records[entry.job_id])))
        yield {**entry.model_dump(mode="json"), **update}


def manifest_head(meta: dict[str, Any], config_hashes: list[str] | None = None) -> Manifest:
    """The manifest without its jobs (they are streamed by :func:`manifest_entries`)."""
    return Manifest(**meta, generated_at=utc_now(), config_hashes=list(config_hashes or []), jobs=[])


def build_manifest(meta: dict[str, Any], jobs: list[JobSpec], statuses: dict[str, str], *,
                   records: dict[str, JobResult] | None = None, carried: list[ManifestJob] | None = None,
                   config_hashes: list[str] | None = None) -> Manifest:
    """The manifest of a run: every job ``pending`` at the start, its status (``reused``,
    ``not_executed``) at the end.  A job with a record carries the record's ``resolved_*``, so the
    entry equals its job_meta.json.  ``carried``: entries of an earlier config of an extended run
    that this config's matrix lacks; they stay, after the matrix's own."""
    head = manifest_head(meta, config_hashes)
    entries = [ManifestJob.model_validate(entry) for entry in manifest_entries(jobs, statuses, records=records,
                                                                               carried=carried)]
    return head.model_copy(update={"jobs": entries})

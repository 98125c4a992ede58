"""The run's meta records: config snapshot and manifest (the expanded matrix with each job's state)."""

from __future__ import annotations

from typing import Any

import yaml

from trace_bench.config.models import RunConfig
from trace_bench.matrix.expand import JobSpec
from trace_bench.runner.resolved import resolved_fields, resolved_of
from trace_bench.store.events import utc_now
from trace_bench.store.models import JobResult, Manifest, ManifestJob
from trace_bench.store.status import PlanState


def snapshot_text(config: RunConfig) -> str:
    """``meta/config.snapshot.yaml``: the validated config, every default filled in."""
    return yaml.safe_dump(config.model_dump(mode="json"), sort_keys=False, allow_unicode=True)


def manifest_entry(spec: JobSpec, status: str = PlanState.PENDING) -> ManifestJob:
    return ManifestJob.model_validate({
        "job_id": spec.job_id, "index": spec.index, "task": spec.task, "suite": spec.suite, "trainer": spec.trainer,
        "params": spec.params, "params_label": spec.params_label, "seed": spec.seed, "eval_kwargs": spec.eval_kwargs,
        "raw_params": spec.params,
        "resolved": {"trainer_kwargs": spec.trainer_kwargs, "optimizer": spec.optimizer or "OptoPrime",
                     "optimizer_kwargs": spec.optimizer_kwargs, "logger": spec.logger},
        "llm_identity": spec.llm_identity, "status": status, **resolved_fields(spec),
        **({"skip_reason": spec.skip_reason} if spec.skip_reason else {}),
    })


def build_manifest(meta: dict[str, Any], jobs: list[JobSpec], statuses: dict[str, str], *,
                   records: dict[str, JobResult] | None = None, carried: list[ManifestJob] | None = None,
                   config_hashes: list[str] | None = None) -> Manifest:
    """The manifest of a run: every job ``pending`` at the start, its status (``reused``,
    ``not_executed``) at the end.  A job with a record carries the record's ``resolved_*``, so the
    entry equals its job_meta.json.  ``carried``: entries of an earlier config of an extended run
    that this config's matrix lacks; they stay, after the matrix's own."""
    missing = PlanState.NOT_EXECUTED if statuses else PlanState.PENDING
    records = records or {}
    entries = []
    for spec in jobs:
        entry = manifest_entry(spec, statuses.get(spec.job_id, missing))
        if spec.job_id in records:
            entry = entry.model_copy(update=resolved_of(records[spec.job_id]))
        entries.append(entry)
    for entry in carried or []:
        update: dict[str, Any] = {"status": statuses.get(entry.job_id, missing)}
        if entry.job_id in records:
            update.update(resolved_of(records[entry.job_id]))
        entries.append(ManifestJob.model_validate({**entry.model_dump(mode="json"), **update}))
    return Manifest(**meta, generated_at=utc_now(), config_hashes=list(config_hashes or []), jobs=entries)

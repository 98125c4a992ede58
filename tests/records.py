"""Job records for tests that need one without running a job: the specification's fields go to
the embedded ``JobSpec``, the others to the record."""

from __future__ import annotations

from typing import Any

from trace_bench.store.models import JobResult, JobSpec

_SPEC_DEFAULTS: dict[str, Any] = {"task": "s:t", "suite": "s", "trainer": "T", "seed": 1, "mode": "stub"}


def spec_of(job_id: str, **fields: Any) -> JobSpec:
    return JobSpec.model_validate({**_SPEC_DEFAULTS, "job_id": job_id, **fields})


def record_of(job_id: str, *, run_id: str = "r", status: str = "ok", **fields: Any) -> JobResult:
    """A record of job ``job_id``; ``fields`` may mix the specification's (``task``, ``seed``, ...)
    and the record's own (``score_best``, ``llm_calls``, ...)."""
    spec = {k: fields.pop(k) for k in list(fields) if k in JobSpec.model_fields}
    return JobResult.model_validate({"run_id": run_id, "spec": spec_of(job_id, **spec), "status": status, **fields})

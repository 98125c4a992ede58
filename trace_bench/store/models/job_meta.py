"""``job_meta.json``: what the driver writes about a job before each attempt and when it ended."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

from pydantic import ConfigDict, Field

from trace_bench.store.models._base import StoreModel, Upgrade
from trace_bench.store.models.spec import DEFAULT_OPTIMIZER, RESOLVED_PREFIX, JobSpec, Resolution

if TYPE_CHECKING:
    from trace_bench.store.models.job import JobResult


def _job_meta_v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    """Older metas knew only the specification: the resolved fields are what it named."""
    return {"resolved_trainer_kwargs": dict(data.get("trainer_kwargs") or {}),
            "resolved_optimizer": data.get("optimizer") or DEFAULT_OPTIMIZER,
            "resolved_optimizer_kwargs": dict(data.get("optimizer_kwargs") or {}),
            "resolved_logger": data.get("logger"), **data}


class JobMeta(StoreModel):
    """``job_meta.json``: the job's specification (``spec``, its keys at the file's top level),
    written by the driver before each attempt and again, with its ``status`` and what the job
    resolved (``resolved_*``), when it ended.  Version 2 adds ``sandbox`` (older files read as the
    default, ``strong``); version 3 adds ``status``, ``raw_params`` (the variant as written, the
    same as ``params``) and the original Trace-Bench's ``resolved_*`` fields, filled from the
    specification in older files, and ``node_id``, set by the driver when the job ends on a Ray
    cluster."""

    model_config = ConfigDict(defer_build=True)

    SCHEMA_VERSION: ClassVar[int] = 3
    UPGRADES: ClassVar[dict[int, Upgrade]] = {2: _job_meta_v2_to_v3}
    FILE: ClassVar[str] = "job_meta.json"
    FLAT: ClassVar[dict[str, str]] = {"spec": "", "resolved": RESOLVED_PREFIX}
    VIEWS: ClassVar[tuple[str, ...]] = ("raw_params",)

    run_id: str
    attempt: int = 1
    spec: JobSpec
    status: str | None = Field(default=None, description="the job's status once it ended (null before); "
                               "`--resume` re-runs a job whose status here is not complete (version 3)")
    resolved: Resolution = Field(default_factory=Resolution)
    node_id: str | None = Field(default=None, description="the Ray node that ran the last attempt (Ray executor)")

    @classmethod
    def planned(cls, spec: JobSpec, run_id: str, attempt: int = 1) -> JobMeta:
        """The meta the driver writes before an attempt: no outcome yet (``status`` null), and
        what the job resolves is what the specification says."""
        return cls(run_id=run_id, attempt=attempt, spec=spec, resolved=Resolution.planned(spec))

    def ended(self, record: JobResult) -> JobMeta:
        """This meta with the job's outcome: its status and what the job resolved (as in results.json)."""
        return self.model_copy(update={"status": str(record.status), "resolved": record.resolved})

    def arrange(self, flat: dict[str, Any], nested: dict[str, Any]) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for key, value in flat.items():
            out[key] = value
            if key == "status":
                out["raw_params"] = nested["spec"]["params"]
        return out

    def view(self, name: str) -> Any:
        if name == "raw_params":
            return self.spec.params
        raise KeyError(name)

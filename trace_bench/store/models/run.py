"""Records of a run's own files: ``meta/manifest.json``, ``meta/env.json``, ``meta/git.json``,
``meta/files_index.json`` and ``summary.json``."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from trace_bench.store.models._base import FlatRecord, StoreModel, Upgrade
from trace_bench.store.models.spec import RESOLVED_PREFIX, JobSpec, Resolution
from trace_bench.store.status import PlanState, Status


class ManifestJob(FlatRecord):
    """One cell of the matrix, in matrix order, with its latest state (``reused``: its record
    was carried over from an earlier invocation; the record keeps its own status).  The entry
    embeds the job's specification (``spec``, its keys at the entry's top level) and what the job
    resolved (``resolved_*``: the specification's until the job ended, then its record's, equal
    to its job_meta.json).  ``raw_params`` (the variant as written, the same as ``params``) is
    the original Trace-Bench's name; the ``resolved`` block is the version-1 form of the
    specification's settings (``trainer_kwargs``, ``optimizer``, ``optimizer_kwargs``, ``logger``)."""

    model_config = ConfigDict(defer_build=True)

    FLAT: ClassVar[dict[str, str]] = {"spec": "", "resolved": RESOLVED_PREFIX}
    VIEWS: ClassVar[tuple[str, ...]] = ("raw_params", "resolved")

    spec: JobSpec
    status: Status | PlanState = PlanState.PENDING
    resolved: Resolution = Field(default_factory=Resolution)

    @property
    def job_id(self) -> str:
        return self.spec.job_id

    def arrange(self, flat: dict[str, Any], nested: dict[str, Any]) -> dict[str, Any]:
        spec = nested["spec"]
        settings = {"trainer_kwargs": spec["trainer_kwargs"], "optimizer": self.spec.optimizer_name or None,
                    "optimizer_kwargs": spec["optimizer_kwargs"], "logger": spec["logger"]}
        return {**{k: v for k, v in flat.items() if not k.startswith(RESOLVED_PREFIX)},
                "raw_params": spec["params"], "resolved": settings,
                **{k: v for k, v in flat.items() if k.startswith(RESOLVED_PREFIX)}}

    def view(self, name: str) -> Any:
        if name == "raw_params":
            return self.spec.params
        raise KeyError(name)


def _manifest_v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Version-1 entries held the resolved settings under ``resolved`` only."""
    jobs = []
    for entry in data.get("jobs") or []:
        if isinstance(entry, dict) and isinstance(entry.get("resolved"), dict):
            resolved = entry["resolved"]
            entry = {"resolved_trainer_kwargs": resolved.get("trainer_kwargs") or {},
                     "resolved_optimizer": resolved.get("optimizer"),
                     "resolved_optimizer_kwargs": resolved.get("optimizer_kwargs") or {},
                     "resolved_logger": resolved.get("logger"), **entry}
        jobs.append(entry)
    return {**data, "jobs": jobs}


def _manifest_v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    """Version 3 only adds ``entries_digest`` (empty: unknown, so the next resume rewrites it)."""
    return dict(data)


def _manifest_v3_to_v4(data: dict[str, Any]) -> dict[str, Any]:
    """Version-3 entries held the specification's identity only: the rest is taken from their
    ``resolved`` block (trainer kwargs, optimizer kwargs, logger) and from the manifest (mode,
    task root)."""
    jobs = []
    for entry in data.get("jobs") or []:
        if isinstance(entry, dict) and "trainer_kwargs" not in entry:
            resolved = entry.get("resolved")
            settings: dict[str, Any] = resolved if isinstance(resolved, dict) else {}
            entry = {"trainer_kwargs": settings.get("trainer_kwargs") or entry.get("resolved_trainer_kwargs") or {},
                     "optimizer_kwargs": settings.get("optimizer_kwargs") or {}, "mode": data.get("mode") or "",
                     "logger": entry.get("resolved_logger"), "task_root": data.get("task_root"), **entry}
        jobs.append(entry)
    return {**data, "jobs": jobs}


class Manifest(StoreModel):
    """The expanded matrix.  Written when a run starts (every job ``pending``) and when it ends.
    Version 2 adds the entries' flat ``resolved_*`` fields, the ``reused`` state and
    ``config_hashes`` (a run extended by a larger config: see ``trace_bench.runner.extend``).
    Version 3 adds ``entries_digest`` (empty in older files) and writes one entry per line.
    Version 4 entries embed the whole specification (older ones: see ``_manifest_v3_to_v4``)."""

    model_config = ConfigDict(defer_build=True)

    SCHEMA_VERSION: ClassVar[int] = 4
    UPGRADES: ClassVar[dict[int, Upgrade]] = {1: _manifest_v1_to_v2, 2: _manifest_v2_to_v3, 3: _manifest_v3_to_v4}
    FILE: ClassVar[str] = "manifest.json"

    run_id: str
    config_hash: str
    mode: str
    tags: list[str] = Field(default_factory=list)
    total_jobs: int = 0
    created_at: str = Field(default="", description="kept across resumes")
    task_root: str | None = None
    generated_at: str | None = Field(default=None, description="when this version was written (not by validate)")
    validated_only: bool = Field(default=False, description="written by `validate --strict`, never run")
    config_hashes: list[str] = Field(default_factory=list, description="the hash of every config the run was "
                                     "started or extended with, in order; `config_hash` covers them all")
    entries_digest: str = Field(default="", description="hash of the job ids, their states and the results "
                                "index these entries were written from: a resume that would write the same entries "
                                "leaves the file alone (version 3)")
    jobs: list[ManifestJob] = Field(default_factory=list)


class TokenTotals(BaseModel):
    model_config = ConfigDict(defer_build=True)

    prompt: int = 0
    completion: int = 0
    total: int = 0


class Summary(StoreModel):
    """``summary.json``: totals over the jobs that have a result, rebuilt from ``results.json``."""

    model_config = ConfigDict(defer_build=True)

    FILE: ClassVar[str] = "summary.json"

    run_id: str
    config_hash: str = ""
    mode: str = ""
    tags: list[str] = Field(default_factory=list)
    total_jobs: int = 0
    created_at: str = ""
    task_root: str | None = None
    finished_jobs: int = 0
    counts: dict[str, int] = Field(default_factory=dict, description="jobs per status")
    token_totals: TokenTotals = Field(default_factory=TokenTotals)
    tokens_estimated: bool = False
    llm_calls: int = 0
    cache_hits: int = 0
    cost_usd: float = 0.0
    job_seconds: float = 0.0
    sandbox: dict[str, int] = Field(default_factory=dict, description="jobs per isolation their LLM-written "
                                    "code ran under (bwrap, weak, \"bwrap,weak\"); jobs that ran none are not counted")


class FileEntry(BaseModel):
    model_config = ConfigDict(defer_build=True)

    path: str = Field(description="relative to the run directory")
    bytes: int


class FilesIndex(StoreModel):
    """``meta/files_index.json``: every file of the run (names starting with ``.`` excepted)."""

    model_config = ConfigDict(defer_build=True)

    FILE: ClassVar[str] = "files_index.json"

    run_dir: str
    generated_at: str
    files: list[FileEntry] = Field(default_factory=list)


class SandboxSetting(BaseModel):
    """How the run lets LLM-written code run, and whether bubblewrap is there (each job's
    ``results.json`` records the isolation its calls really got)."""

    model_config = ConfigDict(defer_build=True)

    setting: Literal["strong", "weak"] = Field(default="strong", description="weak: run without bubblewrap "
                                                "where it is unavailable (recorded per job)")
    chosen_by: str = Field(default="", description="what chose the weak setting: config (the key or "
                           "--allow-weak-sandbox) or TRACE_BENCH_SANDBOX=<value>")
    bubblewrap: Literal["available", "unavailable", "unused"] = Field(
        default="available", description="unused: available, but TRACE_BENCH_SANDBOX=force-weak forgoes it")
    reason: str = Field(default="", description="why bubblewrap is unavailable here")


class EnvInfo(StoreModel):
    """``meta/env.json`` (version 2 adds ``schema_version``, version 3 ``sandbox``, version 4
    ``trainers``; secret-looking values are masked)."""

    model_config = ConfigDict(defer_build=True)

    SCHEMA_VERSION: ClassVar[int] = 4
    FILE: ClassVar[str] = "env.json"

    captured_at: str = ""
    python: str = ""
    implementation: str = ""
    platform: str = ""
    machine: str = ""
    cpu_count: int | None = None
    env: dict[str, str] = Field(default_factory=dict)
    packages: dict[str, str] = Field(default_factory=dict)
    sandbox: SandboxSetting | None = Field(default=None, description="null in runs from before version 3")
    trainers: dict[str, str] = Field(default_factory=dict, description="where each trainer of the run that is not "
                                     "built in came from: a plugin's package and entry point, a module:Class's file "
                                     "(version 4)")


class GitInfo(StoreModel):
    """``meta/git.json`` of the driver's working directory (version 2 adds ``schema_version``)."""

    model_config = ConfigDict(defer_build=True)

    SCHEMA_VERSION: ClassVar[int] = 2
    FILE: ClassVar[str] = "git.json"

    is_repo: bool = False
    commit: str | None = None
    branch: str | None = None
    dirty: bool | None = None
    repo_root: str | None = None

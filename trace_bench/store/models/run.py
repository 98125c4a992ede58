"""Records of a run's own files: ``meta/manifest.json``, ``meta/env.json``, ``meta/git.json``,
``meta/files_index.json`` and ``summary.json``."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from trace_bench.store.models._base import StoreModel, Upgrade
from trace_bench.store.status import PlanState, Status


class ResolvedJob(BaseModel):
    model_config = ConfigDict(extra="allow")

    trainer_kwargs: dict[str, Any] = Field(default_factory=dict)
    optimizer: str | None = Field(default=None, description="OptoPrime when the config names none; null for a "
                                  "trainer that uses no opto optimizer")
    optimizer_kwargs: dict[str, Any] = Field(default_factory=dict)
    logger: str | None = None


class ManifestJob(BaseModel):
    """One cell of the matrix, in matrix order, with its latest state (``reused``: its record
    was carried over from an earlier invocation; the record keeps its own status).  The flat
    ``resolved_*`` fields are the original Trace-Bench's names, equal to the job's job_meta.json
    once the job ended (manifest version 2)."""

    model_config = ConfigDict(extra="allow")

    job_id: str
    index: int = 0
    task: str
    task_label: str = Field(default="", description="the task as tables name it (see results.json); empty in "
                            "older manifests")
    suite: str = ""
    trainer: str
    params: dict[str, Any] = Field(default_factory=dict)
    params_label: str = "default"
    seed: int
    eval_kwargs: dict[str, Any] = Field(default_factory=dict)
    raw_params: dict[str, Any] = Field(default_factory=dict, description="the variant as written (same as params)")
    resolved: ResolvedJob = Field(default_factory=ResolvedJob)
    llm_identity: dict[str, Any] = Field(default_factory=dict)
    status: Status | PlanState = PlanState.PENDING
    skip_reason: str | None = None
    resolved_trainer_kwargs: dict[str, Any] = Field(default_factory=dict)
    resolved_optimizer: str | None = None
    resolved_optimizer_kwargs: dict[str, Any] = Field(default_factory=dict)
    resolved_guide: str | None = None
    resolved_guide_kwargs: dict[str, Any] = Field(default_factory=dict)
    resolved_logger: str | None = None
    resolved_logger_kwargs: dict[str, Any] = Field(default_factory=dict)


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


class Manifest(StoreModel):
    """The expanded matrix.  Written when a run starts (every job ``pending``) and when it ends.
    Version 2 adds the entries' flat ``resolved_*`` fields, the ``reused`` state and
    ``config_hashes`` (a run extended by a larger config: see ``trace_bench.runner.extend``).
    Version 3 adds ``entries_digest`` (empty in older files) and writes one entry per line."""

    SCHEMA_VERSION: ClassVar[int] = 3
    UPGRADES: ClassVar[dict[int, Upgrade]] = {1: _manifest_v1_to_v2, 2: _manifest_v2_to_v3}
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
    prompt: int = 0
    completion: int = 0
    total: int = 0


class Summary(StoreModel):
    """``summary.json``: totals over the jobs that have a result, rebuilt from ``results.json``."""

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
    path: str = Field(description="relative to the run directory")
    bytes: int


class FilesIndex(StoreModel):
    """``meta/files_index.json``: every file of the run (names starting with ``.`` excepted)."""

    FILE: ClassVar[str] = "files_index.json"

    run_dir: str
    generated_at: str
    files: list[FileEntry] = Field(default_factory=list)


class SandboxSetting(BaseModel):
    """How the run lets LLM-written code run, and whether bubblewrap is there (each job's
    ``results.json`` records the isolation its calls really got)."""

    setting: Literal["strong", "weak"] = Field(default="strong", description="weak: run without bubblewrap "
                                                "where it is unavailable (recorded per job)")
    chosen_by: str = Field(default="", description="what chose the weak setting: config (the key or "
                           "--allow-weak-sandbox) or TRACE_BENCH_SANDBOX=<value>")
    bubblewrap: Literal["available", "unavailable", "unused"] = Field(
        default="available", description="unused: available, but TRACE_BENCH_SANDBOX=force-weak forgoes it")
    reason: str = Field(default="", description="why bubblewrap is unavailable here")


class EnvInfo(StoreModel):
    """``meta/env.json`` (version 2 adds ``schema_version``, version 3 ``sandbox``; secret-looking
    values are masked)."""

    SCHEMA_VERSION: ClassVar[int] = 3
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


class GitInfo(StoreModel):
    """``meta/git.json`` of the driver's working directory (version 2 adds ``schema_version``)."""

    SCHEMA_VERSION: ClassVar[int] = 2
    FILE: ClassVar[str] = "git.json"

    is_repo: bool = False
    commit: str | None = None
    branch: str | None = None
    dirty: bool | None = None
    repo_root: str | None = None

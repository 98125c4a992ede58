"""Records of a run's own files: ``meta/manifest.json``, ``meta/env.json``, ``meta/git.json``,
``meta/files_index.json`` and ``summary.json``."""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field

from trace_bench.store.models._base import StoreModel
from trace_bench.store.status import PlanState, Status


class ResolvedJob(BaseModel):
    model_config = ConfigDict(extra="allow")

    trainer_kwargs: dict[str, Any] = Field(default_factory=dict)
    optimizer: str | None = Field(default=None, description="OptoPrime when the config names none")
    optimizer_kwargs: dict[str, Any] = Field(default_factory=dict)
    logger: str | None = None


class ManifestJob(BaseModel):
    """One cell of the matrix, in matrix order, with its latest state."""

    model_config = ConfigDict(extra="allow")

    job_id: str
    index: int = 0
    task: str
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


class Manifest(StoreModel):
    """The expanded matrix.  Written when a run starts (every job ``pending``) and when it ends."""

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


class FileEntry(BaseModel):
    path: str = Field(description="relative to the run directory")
    bytes: int


class FilesIndex(StoreModel):
    """``meta/files_index.json``: every file of the run (names starting with ``.`` excepted)."""

    FILE: ClassVar[str] = "files_index.json"

    run_dir: str
    generated_at: str
    files: list[FileEntry] = Field(default_factory=list)


class EnvInfo(StoreModel):
    """``meta/env.json`` (version 2 adds ``schema_version``; secret-looking values are masked)."""

    SCHEMA_VERSION: ClassVar[int] = 2
    FILE: ClassVar[str] = "env.json"

    captured_at: str = ""
    python: str = ""
    implementation: str = ""
    platform: str = ""
    machine: str = ""
    cpu_count: int | None = None
    env: dict[str, str] = Field(default_factory=dict)
    packages: dict[str, str] = Field(default_factory=dict)


class GitInfo(StoreModel):
    """``meta/git.json`` of the driver's working directory (version 2 adds ``schema_version``)."""

    SCHEMA_VERSION: ClassVar[int] = 2
    FILE: ClassVar[str] = "git.json"

    is_repo: bool = False
    commit: str | None = None
    branch: str | None = None
    dirty: bool | None = None
    repo_root: str | None = None

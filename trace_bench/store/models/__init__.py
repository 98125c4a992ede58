"""Pydantic models of every file of a run directory (see docs/artifacts.md and docs/schemas/)."""

from __future__ import annotations

from trace_bench.store.models._base import FlatRecord, NewerSchemaError, StoreError, StoreModel, UpgradeError
from trace_bench.store.models.artifacts import (
    CREDITED_CURVE_KINDS,
    CURVE_COLUMNS,
    OBJECTIVE_PREFIX,
    CurveRow,
    Heartbeat,
    IntegrityFlag,
    IntegrityReport,
    LeakFinding,
    StateFile,
    StateHistoryLine,
    StateParameter,
    StateSnapshot,
)
from trace_bench.store.models.error import JobError, declared_status
from trace_bench.store.models.events import (
    JOB_EVENTS,
    RUN_EVENTS,
    BudgetExhausted,
    Event,
    JobEnded,
    JobEvent,
    JobFinished,
    JobRetry,
    JobStarted,
    JobSubmitted,
    LLMCall,
    OtherEvent,
    Preflight,
    RunEvent,
    RunFinished,
    RunStarted,
    SandboxDenial,
    Step,
    TrackerWarning,
)
from trace_bench.store.models.job import CSV_COLUMNS, LEGACY_CSV_COLUMNS, JobResult, KeyRefusal
from trace_bench.store.models.job_meta import JobMeta
from trace_bench.store.models.leaderboard import LEADERBOARD_COLUMNS, LeaderboardRow
from trace_bench.store.models.race import RaceArm, RaceDecision, RaceRecord, RaceRound
from trace_bench.store.models.run import (
    EnvInfo,
    FileEntry,
    FilesIndex,
    GitInfo,
    Manifest,
    ManifestJob,
    SandboxSetting,
    Summary,
    TokenTotals,
)
from trace_bench.store.models.spec import (
    ARM_FIELDS,
    DEFAULT_OPTIMIZER,
    RESOLVED_FIELDS,
    Arm,
    JobSpec,
    Resolution,
    arm_label,
)
from trace_bench.store.models.spend import (
    CARRIED_COLUMNS,
    COUNTED,
    SPEND_AXES,
    SPEND_COLUMNS,
    Attempts,
    RoleUsage,
    Spend,
    SpendEntry,
)
from trace_bench.store.models.transcript import CUT_MARKER, TranscriptEntry, TranscriptMessage

__all__ = [
    "ARM_FIELDS", "DEFAULT_OPTIMIZER", "Arm", "FlatRecord", "JobSpec", "Resolution", "arm_label",
    "CREDITED_CURVE_KINDS", "CSV_COLUMNS", "LEADERBOARD_COLUMNS", "LeaderboardRow", "CURVE_COLUMNS", "JOB_EVENTS",
    "LEGACY_CSV_COLUMNS", "OBJECTIVE_PREFIX",
    "RESOLVED_FIELDS", "CARRIED_COLUMNS", "COUNTED", "SPEND_AXES", "SPEND_COLUMNS", "Spend", "JobError",
    "declared_status",
    "RUN_EVENTS", "Attempts", "BudgetExhausted", "CurveRow", "EnvInfo",
    "Event", "FileEntry", "FilesIndex", "GitInfo", "Heartbeat", "IntegrityFlag", "IntegrityReport", "JobEnded", "JobEvent", "JobFinished", "JobMeta",
    "JobResult", "JobRetry", "JobStarted", "JobSubmitted", "KeyRefusal", "LLMCall", "LeakFinding", "Manifest", "ManifestJob", "NewerSchemaError",
    "OtherEvent", "RoleUsage", "RunEvent", "RunFinished", "RunStarted", "SandboxDenial", "SandboxSetting", "SpendEntry", "StateFile",
    "StateHistoryLine", "StateParameter", "StateSnapshot", "Step", "StoreError", "StoreModel", "Summary",
    "TokenTotals", "TrackerWarning", "Preflight", "UpgradeError",
    "CUT_MARKER", "TranscriptEntry", "TranscriptMessage", "RaceArm", "RaceDecision", "RaceRecord", "RaceRound",
]

"""Records of one job directory: ``job_meta.json``, ``results.json``, ``attempts.json``,
``heartbeat.json``, the rows of ``artifacts/curve.csv``, the state files and the lines of
``artifacts/state_history.jsonl``.  Per-job ``results.json`` is the source of truth of every table.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from trace_bench.store.models._base import StoreModel, Upgrade
from trace_bench.store.status import Status

SCORE_FIELDS = ("score_initial", "score_final", "score_best", "score_test", "score_test_last", "score_test_best")
#: The original Trace-Bench's names of what a job resolved, kept in job_meta.json and results.json.
RESOLVED_FIELDS = ("resolved_trainer_kwargs", "resolved_optimizer", "resolved_optimizer_kwargs", "resolved_guide",
                   "resolved_guide_kwargs", "resolved_logger", "resolved_logger_kwargs")


def _job_meta_v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    """Older metas knew only the specification: the resolved fields are what it named."""
    return {"raw_params": dict(data.get("params") or {}),
            "resolved_trainer_kwargs": dict(data.get("trainer_kwargs") or {}),
            "resolved_optimizer": data.get("optimizer") or "OptoPrime",
            "resolved_optimizer_kwargs": dict(data.get("optimizer_kwargs") or {}),
            "resolved_logger": data.get("logger"), **data}


class JobMeta(StoreModel):
    """The job's full specification, written by the driver before each attempt and again, with its
    ``status`` and the settings the job resolved, when it ended (version 2 adds ``sandbox``; older
    files read as the default, ``strong``; version 3 adds ``status``, ``raw_params`` and the
    original Trace-Bench's ``resolved_*`` fields, filled from the specification in older files, and ``node_id``, set by the driver when the
    job ends on a Ray cluster)."""

    SCHEMA_VERSION: ClassVar[int] = 3
    UPGRADES: ClassVar[dict[int, Upgrade]] = {2: _job_meta_v2_to_v3}
    FILE: ClassVar[str] = "job_meta.json"

    run_id: str
    attempt: int = 1
    job_id: str
    index: int = 0
    task: str
    suite: str = ""
    eval_kwargs: dict[str, Any] = Field(default_factory=dict)
    task_label: str = Field(default="", description="the task as tables name it: its id, or `id[k=v,...]` when "
                            "the run has it under several eval_kwargs (empty in older files: the id)")
    trainer: str
    params: dict[str, Any] = Field(default_factory=dict)
    params_label: str = "default"
    trainer_kwargs: dict[str, Any] = Field(default_factory=dict, description="resolved, every default filled in")
    optimizer: str | None = None
    optimizer_kwargs: dict[str, Any] = Field(default_factory=dict)
    seed: int
    mode: str
    llm: dict[str, Any] = Field(default_factory=dict, description="the config's llm block (key names, never keys)")
    llm_identity: dict[str, Any] = Field(default_factory=dict)
    budget: dict[str, Any] = Field(default_factory=dict)
    logger: str | None = None
    task_root: str | None = None
    skip_reason: str | None = None
    sandbox: Literal["strong", "weak"] = Field(
        default="strong", description="weak: LLM-written code may run without bubblewrap where it is missing")
    status: str | None = Field(default=None, description="the job's status once it ended (null before); "
                               "`--resume` re-runs a job whose status here is not complete (version 3)")
    raw_params: dict[str, Any] = Field(default_factory=dict, description="the variant as written (version 3)")
    resolved_trainer_kwargs: dict[str, Any] = Field(default_factory=dict)
    resolved_optimizer: str | None = Field(default=None, description="the optimizer the job really used")
    resolved_optimizer_kwargs: dict[str, Any] = Field(default_factory=dict, description="the task's optimizer "
                                                      "kwargs updated with the config's")
    resolved_guide: str | None = Field(default=None, description="class of the task's guide")
    resolved_guide_kwargs: dict[str, Any] = Field(default_factory=dict)
    resolved_logger: str | None = None
    resolved_logger_kwargs: dict[str, Any] = Field(default_factory=dict)
    node_id: str | None = Field(default=None, description="the Ray node that ran the last attempt (Ray executor)")


class RoleUsage(BaseModel):
    """LLM usage of one role (optimizer, agent, judge) in one job."""

    model_config = ConfigDict(extra="allow")

    llm_calls: int = 0
    cache_hits: int = 0
    errors: int = 0
    retries: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cost_usd: float = 0.0
    estimated: bool = False


def _test_best_from_test(data: dict[str, Any]) -> dict[str, Any]:
    """Version 3 -> 4: ``score_test`` was already the test score of the best state."""
    return {**data, "score_test_best": data.get("score_test")}


class JobResult(StoreModel):
    """A job's record.  Version 2: never a bare ``NaN``; non-finite scores are null and named in
    ``non_finite`` (version-1 files that hold ``NaN`` are upgraded the same way on read).
    Version 3 adds ``sandbox`` (older files: empty, not recorded) and ``best_state_failed`` (false in
    older files).  Version 4 splits spend by phase: ``llm_calls``, tokens and ``cost_usd`` count the
    trainer's calls only (what a budget counts), ``measure_*`` the harness's own scoring calls; and it
    adds ``score_test_last``/``score_test_best``.  A version-3 file's spend included both phases: it
    reads with ``measure_*`` null (not recorded apart) and ``score_test_best`` = its ``score_test``.
    Version 4 also adds ``optimizer``, the model of each role (``model_<role>``) and the original
    Trace-Bench's ``eval_kwargs``, ``resolved_*``, ``llm_provider`` and ``llm_base_url`` (empty in
    older files).  Version 5 adds the integrity audit: ``leaked_test_items``,
    ``leaked_validation_items``, ``sandbox_denials`` and ``sandbox_denial_kinds`` (null in older
    files: not audited), ``task_label`` (empty in older files: the task id) and
    ``guide_errors_scored`` (null), and the status ``task_error``."""

    model_config = ConfigDict(extra="allow", validate_assignment=True)
    SCHEMA_VERSION: ClassVar[int] = 5
    UPGRADES: ClassVar[dict[int, Upgrade]] = {3: _test_best_from_test}
    FILE: ClassVar[str] = "results.json"

    run_id: str
    job_id: str
    task: str
    task_label: str = Field(default="", description="the task as every ranking and table names it: its id, or "
                            "`id[k=v,...]` when the run has it under several eval_kwargs, each variant its own "
                            "task (empty in older files: read as the id, or from an `;eval:` params_label)")
    suite: str
    trainer: str
    params: dict[str, Any] = Field(default_factory=dict)
    params_label: str = "default"
    seed: int
    mode: str
    llm_model: str = ""
    optimizer: str = Field(default="", description="the optimizer the job was configured with (the default "
                           "OptoPrime when none was named; empty for a trainer that uses no opto optimizer, such as "
                           "the external libraries' trainers and NoOpTrainer; version 4)")
    model_optimizer: str = Field(default="", description="the model of the optimizer role (version 4)")
    model_agent: str = Field(default="", description="the model of the agent role (version 4)")
    model_judge: str = Field(default="", description="the model of the judge role (version 4)")
    status: Status
    error: str = ""
    traceback: str = ""
    score_initial: float | None = None
    score_final: float | None = None
    score_best: float | None = None
    score_test: float | None = Field(default=None, description="held-out test score of the best state (the "
                                     "same value as ``score_test_best``, kept under its original name)")
    score_test_last: float | None = Field(default=None, description="held-out test score of the last iterate "
                                          "(the state after training); null without a test split (version 4)")
    score_test_best: float | None = Field(default=None, description="held-out test score of the best state "
                                          "(selected on the selection split); null without a test split (version 4)")
    selection_split: str = "train"
    n_steps: int = 0
    n_evals: int = 0
    llm_calls: int = 0
    cache_hits: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    tokens_estimated: bool = False
    cost_usd: float = 0.0
    measure_llm_calls: int | None = Field(default=None, description="the harness's measurement calls (scoring "
                                          "states on the selection and test splits); null in files before version 4, "
                                          "whose ``llm_calls`` included them")
    measure_tokens: int | None = Field(default=None, description="total tokens of the measurement calls (version 4)")
    measure_cost_usd: float | None = Field(default=None, description="USD of the measurement calls (version 4)")
    llm_errors: int = 0
    llm_retries: int = 0
    time_seconds: float = 0.0
    started_at: str = ""
    finished_at: str = ""
    attempt: int = 1
    score_dict_best: dict[str, float | None] = Field(default_factory=dict)
    best_state_failed: bool = Field(default=False, description="the best state raised or gave an unscorable "
                                    "output on a selection example (its score holds the task's failure score)")
    guide_errors_scored: int | None = Field(default=None, description="null unless the task opted in with "
                                            "`score_guide_errors`; then how many exceptions or non-finite scores "
                                            "of its guide were scored as failures instead of ending the job")
    usage_by_role: dict[str, RoleUsage] = Field(default_factory=dict)
    budget_spent: dict[str, float] = Field(default_factory=dict)
    non_finite: list[str] = Field(default_factory=list, description="score fields whose value was NaN or "
                                  "infinite and is stored as null (version 2)")
    sandbox: str = Field(default="", description="the isolation LLM-written code ran under in this job: "
                         "bwrap, weak (both, comma-separated, if it changed), or empty when none ran (version 3)")
    eval_kwargs: dict[str, Any] = Field(default_factory=dict, description="the task's eval kwargs (version 4)")
    resolved_trainer_kwargs: dict[str, Any] = Field(default_factory=dict, description="every default filled in")
    resolved_optimizer: str | None = Field(default=None, description="the optimizer the job really used")
    resolved_optimizer_kwargs: dict[str, Any] = Field(default_factory=dict, description="the task's optimizer "
                                                      "kwargs updated with the config's")
    resolved_guide: str | None = Field(default=None, description="class of the task's guide")
    resolved_guide_kwargs: dict[str, Any] = Field(default_factory=dict)
    resolved_logger: str | None = None
    resolved_logger_kwargs: dict[str, Any] = Field(default_factory=dict)
    leaked_test_items: int | None = Field(default=None, description="test items whose input (a long verbatim "
                                          "run) or reference answer the best or final state holds; null without a "
                                          "test split or when the job was not audited (version 5)")
    leaked_validation_items: int | None = Field(default=None, description="the same for the validation split "
                                                "(version 5)")
    sandbox_denials: int | None = Field(default=None, description="boundaries the job's sandboxed calls ran into "
                                        "(refused syscalls, writes, network, processes, forged results, timeouts, "
                                        "memory); null in older files (version 5)")
    sandbox_denial_kinds: dict[str, int] = Field(default_factory=dict, description="``sandbox_denials`` per kind "
                                                 "(version 5)")
    llm_provider: str = Field(default="", description="`llm.provider` of the config, `stub` in stub mode")
    llm_base_url: str = Field(default="", description="`llm.base_url` of the config")
    best_known: float | None = Field(default=None, description="the best value published for the task (discovery "
                                     "tasks), of the metric it names; null when the task declares none")
    best_known_source: str = Field(default="", description="where the best known value comes from")
    pct_of_best_known: float | None = Field(default=None, description="how far the best state got, as % of the best "
                                            "known value (100 = matched, above = beaten; direction applied)")
    score_trust: str = Field(default="", description="`trusted`: the score was computed outside the candidate's "
                             "process; `candidate-reachable`: the candidate ran in the process that scored it "
                             "(a plain evaluate() task); empty for tasks that do not say")
    metrics_best: dict[str, float | None] = Field(default_factory=dict, description="the task evaluator's metrics "
                                                  "of the best state (discovery tasks)")

    @model_validator(mode="after")
    def _null_non_finite(self) -> JobResult:
        flagged = list(self.non_finite)
        for name in SCORE_FIELDS:
            value = getattr(self, name)
            if value is not None and not math.isfinite(value):
                object.__setattr__(self, name, None)  # no re-validation loop
                flagged.append(name)
        for key, value in list(self.score_dict_best.items()):
            if value is not None and not math.isfinite(value):
                self.score_dict_best[key] = None
                flagged.append(f"score_dict_best.{key}")
        for key, value in list(self.metrics_best.items()):
            if value is not None and not math.isfinite(value):
                self.metrics_best[key] = None
                flagged.append(f"metrics_best.{key}")
        if flagged != self.non_finite:
            object.__setattr__(self, "non_finite", sorted(set(flagged)))
        return self


#: results.csv columns, in order (objective columns ``obj_<metric>`` follow).
CSV_COLUMNS = (
    "run_id", "job_id", "task", "task_label", "suite", "trainer", "optimizer", "params", "params_label", "seed", "mode",
    "llm_model", "model_optimizer", "model_agent", "model_judge", "status", "error", "guide_errors_scored",
    "score_initial", "score_final",
    "score_best", "score_test", "score_test_last", "score_test_best", "selection_split", "n_steps", "n_evals", "llm_calls", "cache_hits", "prompt_tokens",
    "completion_tokens", "total_tokens", "tokens_estimated", "cost_usd", "measure_llm_calls", "measure_tokens",
    "measure_cost_usd", "time_seconds", "started_at", "finished_at", "sandbox", "leaked_test_items",
    "leaked_validation_items", "sandbox_denials", "sandbox_denial_kinds", "best_known", "pct_of_best_known",
    "score_trust",
)
#: The original Trace-Bench's results.csv columns that ours lack, in its order; written after ours and
#: after the ``obj_<metric>`` columns (see ``trace_bench.store.legacy_columns``).
LEGACY_CSV_COLUMNS = (
    "task_id", "trainer_id", "score_val_initial", "score_val_final", "score_val", "resolved_optimizer",
    "resolved_guide", "resolved_logger", "resolved_trainer_kwargs", "resolved_optimizer_kwargs",
    "resolved_guide_kwargs", "resolved_logger_kwargs", "eval_kwargs", "feedback", "llm_provider", "llm_base_url",
    "token_scope", "initial_state_path", "best_state_path", "final_state_path", "state_history_path", "tb_logdir",
)


class Attempts(StoreModel):
    """``attempts.json``: the budget ledger that survives a re-run of the job (version 2 adds
    ``schema_version``; version 1 had none)."""

    SCHEMA_VERSION: ClassVar[int] = 2
    FILE: ClassVar[str] = "attempts.json"

    attempts: int = 0
    carried: dict[str, float] = Field(default_factory=lambda: {"llm_calls": 0, "tokens": 0, "usd": 0.0},
                                      description="training-phase spend of the earlier attempts")


class SpendEntry(StoreModel):
    """A line of ``llm_spend.jsonl``, the job's spend journal: one ``sent`` line before each LLM
    call goes out, one ``settled`` line when it came back (``llm_calls`` 0 for a call that failed:
    failed calls are not charged).  A ``sent`` line without its ``settled`` one is a call cut off
    in flight (a kill, a timeout, a job that ended while it ran): the provider received it and
    bills it, so it is charged as one call, its prompt's estimated tokens plus a completion of
    ``completion_cap`` tokens (the request's limit; 0 without one) and ``usd_if_cut``, all flagged
    estimated.  Only ``train`` lines count against the budget.  Version 2 adds ``phase``,
    ``completion_cap`` and ``usd_if_cut`` (version-1 files journaled training calls only)."""

    SCHEMA_VERSION: ClassVar[int] = 2
    FILE: ClassVar[str] = "llm_spend.jsonl"

    call: int = Field(description="number of the call within the job's attempt, from 1")
    event: Literal["sent", "settled"]
    phase: Literal["train", "measure"] = Field(default="train", description="whose call: the trainer's "
                                               "(what a budget counts) or the harness measuring a state")
    prompt_tokens: int = Field(default=0, description="sent: the prompt's estimated token count")
    completion_cap: int | None = Field(default=None, description="sent: the completion limit the request carried")
    usd_if_cut: float = Field(default=0.0, description="sent: the estimated cost of the prompt and a completion "
                              "of completion_cap tokens (0 when the model's price is unknown)")
    llm_calls: int = Field(default=0, description="settled: 1, or 0 for a call that failed")
    tokens: int = Field(default=0, description="settled: total tokens the provider reported (or the cache replayed)")
    usd: float = Field(default=0.0, description="settled: the call's cost")


class Heartbeat(StoreModel):
    """``heartbeat.json``: refreshed every few seconds while the job process lives."""

    SCHEMA_VERSION: ClassVar[int] = 2
    FILE: ClassVar[str] = "heartbeat.json"

    pid: int
    ts: str
    monotonic: float


#: what a curve row is (``CurveRow.kind``)
CurveKind = Literal["initial", "step", "final", "harness_final", "stop"]


class CurveRow(StoreModel):
    """One row of ``artifacts/curve.csv``.  The CSV has no version column: its header is its
    contract (``CURVE_COLUMNS``, then ``obj_<metric>`` per objective of a multi-objective task),
    and a row read back is always the current version.  Version 2 adds ``objectives``; version 3
    makes ``llm_calls``/``tokens``/``usd`` the trainer's spend (the budget's quantity; before, they
    included the harness's measurements) and adds the ``measure_*`` columns (empty in older files);
    version 4 adds ``kind`` and the last row at the job's total spend (older curves may stop at
    their last reported step)."""

    SCHEMA_VERSION: ClassVar[int] = 4
    FILE: ClassVar[str] = "curve.csv"

    step: int
    wall_s: float | None = None
    n_evals: int | None = None
    llm_calls: int | None = None
    tokens: int | None = None
    usd: float | None = None
    score: float | None = None
    best_score: float | None = None
    measure_llm_calls: int | None = None
    measure_tokens: int | None = None
    measure_usd: float | None = None
    objectives: dict[str, float | None] = Field(
        default_factory=dict, description="per-objective means of the reported state on the selection split, as the "
        "guide returned them (the ``obj_<metric>`` columns; empty on a single-objective task)")
    kind: CurveKind | None = Field(
        default=None, description="what the row is: `initial` (the initial state), `step` (a state the trainer "
        "reported), `final` (training ended normally: the state it ended on, credited like a step), "
        "`harness_final` (training was stopped, by its budget or an error: the harness's measurement of the "
        "parameters the trainer left, shown at the total spend and never counted in `best_score`), `stop` (the "
        "job ended without measuring them: killed, or its task failed; spend only).  Every curve ends with a "
        "`final`, `harness_final` or `stop` row at the job's total trainer-phase spend.  Empty in files "
        "written before the column existed.")


#: the kinds whose score counts towards ``best_score`` (the trainer's validated states)
CREDITED_CURVE_KINDS = ("initial", "step", "final")
CURVE_COLUMNS = ("step", "wall_s", "n_evals", "llm_calls", "tokens", "usd", "score", "best_score",
                 "measure_llm_calls", "measure_tokens", "measure_usd", "kind")
#: prefix of the curve.csv column of one objective (``obj_<metric>``)
OBJECTIVE_PREFIX = "obj_"


class StateParameter(BaseModel):
    model_config = ConfigDict(extra="allow")

    index: int
    name: str | None = None
    trainable: bool = True
    value: Any = None


class StateSnapshot(BaseModel):
    """The values of a problem's trainable parameters, in a fixed order."""

    model_config = ConfigDict(extra="allow")

    kind: str = "state"
    parameters: list[StateParameter] = Field(default_factory=list)


class StateFile(StoreModel):
    """``artifacts/{initial,best,final}_state.yaml``.  ``step`` is set on the best state written
    while training (the step that improved it); version 2 adds ``schema_version``."""

    SCHEMA_VERSION: ClassVar[int] = 2
    FILE: ClassVar[str] = "state.yaml"

    kind: str = "state"
    parameters: list[StateParameter] = Field(default_factory=list)
    score: float | None = None
    step: int | None = None


class LeakFinding(BaseModel):
    """One held-out item found in a state (see trace_bench.integrity.leakage)."""

    model_config = ConfigDict(extra="allow")

    split: str = Field(description="test or validation")
    item: int = Field(description="index of the item in its split")
    kind: Literal["answer", "input"] = Field(description="answer: its reference answer verbatim; input: a long "
                                             "verbatim run of its input")
    state: str = Field(description="best or final")
    parameter: str = ""
    excerpt: str = Field(default="", description="the matched text, masked to its first words")
    words: int = 0
    in_initial: bool = Field(default=False, description="the initial state held the same text: the task handed it "
                             "to the optimizer")


class IntegrityReport(StoreModel):
    """``artifacts/integrity.json``: the job's leakage audit (what ``leaked_*`` in results.json count) and
    its sandbox denials per kind."""

    SCHEMA_VERSION: ClassVar[int] = 1
    FILE: ClassVar[str] = "integrity.json"

    searched: dict[str, int] = Field(default_factory=dict, description="items searched for, per split")
    shared_with_train: dict[str, int] = Field(default_factory=dict, description="items left out because a "
                                              "training input is the same (not held out)")
    leaked: dict[str, list[int]] = Field(default_factory=dict, description="indices of the leaked items, per split")
    findings: list[LeakFinding] = Field(default_factory=list)
    more_findings: int = Field(default=0, description="findings beyond the ones listed")
    states: list[str] = Field(default_factory=list, description="the states searched (best, final)")
    sandbox_denials: dict[str, int] = Field(default_factory=dict, description="denials per kind")
    error: str = Field(default="", description="why the audit could not finish (then nothing is counted)")


class StateHistoryLine(StoreModel):
    """A line of ``artifacts/state_history.jsonl`` (version 2 adds ``schema_version``, version 3
    ``score_dict``)."""

    SCHEMA_VERSION: ClassVar[int] = 3
    FILE: ClassVar[str] = "state_history.jsonl"

    ts: str = ""
    kind: Literal["initial", "step", "final"]
    step: int = 0
    score: float | None = None
    score_dict: dict[str, float | None] = Field(
        default_factory=dict, description="per-objective means of the state on the selection split "
        "(``{\"score\": s}`` on a single-objective task)")
    state: StateSnapshot = Field(default_factory=StateSnapshot)

"""``results.json``, the job's record: the source of truth of every table, and results.csv's columns,
derived from its fields.  Its upgrades from older files are in :mod:`.result_upgrades`, the
driver's ``job_meta.json`` in :mod:`.job_meta`, what the job spends in :mod:`.spend`, its live
files and artifacts in :mod:`.artifacts`.
"""

from __future__ import annotations

import math
from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from trace_bench.store.models._base import StoreModel, Upgrade
from trace_bench.store.models.budget_use import budget_used, under_spent_reason
from trace_bench.store.models.error import JobError, error_from_text
from trace_bench.store.models.result_upgrades import carried_spend, spec_from_flat, test_best_from_test
from trace_bench.store.models.spec import (
    RESOLVED_PREFIX,
    SPEC_VIEW_COLUMNS,
    Arm,
    JobSpec,
    Resolution,
)
from trace_bench.store.models.spend import RoleUsage, Spend
from trace_bench.store.status import Status

SCORE_FIELDS = ("score_initial", "score_final", "score_best", "score_test", "score_test_last", "score_test_best")
#: what a record's file shows of its error, as text, after its status (computed from ``job_error``)
ERROR_VIEWS = ("error", "traceback")
#: keys a field's ``json_schema_extra`` may hold: ``column`` (False: not a results.csv column),
#: ``kind`` (how a reader types the column: ``timestamp`` for an ISO text)
NOT_A_COLUMN: dict[str, Any] = {"column": False}


class KeyRefusal(BaseModel):
    """A provider's refusal that no later call with the same key escapes: the key (401/403) or a
    quota spent for good (OpenAI's ``insufficient_quota``, a 402).  The key itself is never kept."""

    model_config = ConfigDict(defer_build=True)

    key_variable: str = Field(description="the environment variable the refused key came from")
    kind: Literal["auth", "quota"] = "auth"
    status: int | None = None
    message: str = ""


class JobResult(StoreModel):
    """A job's record: its specification (``spec``, embedded whole), how it ended, its scores and
    its spend.  The file also shows the specification's results.csv columns (``task``, ``trainer``,
    ``params_label``, ``llm_model``, ...) and ``eval_kwargs``, ``llm_provider``, ``llm_base_url`` at
    its top level for readers; they are computed from ``spec`` and never read back.

    Every field below ``spec`` is a results.csv column, in this order, unless it says otherwise
    (``column: false``): a new field is a new column.  Version 2: never a bare ``NaN``; non-finite
    scores are null and named in ``non_finite`` (version-1 files that hold ``NaN`` are upgraded the
    same way on read).  Version 3 adds ``sandbox`` (older files: empty, not recorded) and
    ``best_state_failed`` (false in older files).  Version 4 splits spend by phase: ``llm_calls``,
    tokens and ``cost_usd`` count the trainer's calls only (what a budget counts), ``measure_*`` the
    harness's own scoring calls; and it adds ``score_test_last``/``score_test_best``.  A version-3
    file's spend included both phases: it reads with ``measure_*`` null (not recorded apart) and
    ``score_test_best`` = its ``score_test``.  Version 4 also adds ``optimizer``, the model of each
    role (``model_<role>``) and the original Trace-Bench's ``eval_kwargs``, ``resolved_*``,
    ``llm_provider`` and ``llm_base_url`` (empty in older files).  Version 5 adds the integrity
    audit: ``leaked_test_items``, ``leaked_validation_items``, ``sandbox_denials`` and
    ``sandbox_denial_kinds`` (null in older files: not audited), ``task_label`` (empty in older
    files: the task id) and ``guide_errors_scored`` (null), and the status ``task_error``.
    Version 6 embeds the whole specification under ``spec`` (older files: rebuilt from their
    columns).  Version 7: ``llm_calls``, ``total_tokens`` and ``cost_usd`` are the job's spend over
    all its attempts (an interrupted attempt's spend carried into the resumed one), the part earlier
    attempts spent in ``carried_*``; a version-6 file counted its last attempt only and reads with
    the carried spend its ``budget_spent`` shows added (``carried_*`` null for a job that ran once).
    Version 8 adds ``score_range`` (null in older files: not recorded).
    Version 9 adds ``pct_of_alphaevolve`` and ``best_known_score`` (null in older files).
    Version 10: the job's error is a :class:`~trace_bench.store.models.error.JobError` (``job_error``:
    status, type, message, traceback, phase); the file still shows ``error`` (its message, the
    results.csv column) and ``traceback`` as text, and the texts of a file of versions 7 to 9 become
    its ``job_error`` (a version-8 or -9 file keeps its ``score_range``, ``pct_of_alphaevolve`` and
    ``best_known_score``: fields of this version too).

    The record is frozen (optuna's ``FrozenTrial``): a job fills its live handle
    (``trace_bench.store.live_result.LiveResult``, the ``Trial``), which builds the record once."""

    model_config = ConfigDict(extra="allow", frozen=True)
    SCHEMA_VERSION: ClassVar[int] = 10
    UPGRADES: ClassVar[dict[int, Upgrade]] = {3: test_best_from_test, 5: spec_from_flat, 6: carried_spend,
                                              9: error_from_text}
    FILE: ClassVar[str] = "results.json"
    FLAT: ClassVar[dict[str, str]] = {"resolved": RESOLVED_PREFIX}
    #: what the file shows of ``spec`` (results.csv's specification columns, then the original's
    #: names) and of ``job_error`` (its message and traceback as text)
    VIEWS: ClassVar[tuple[str, ...]] = (*SPEC_VIEW_COLUMNS, "eval_kwargs", "llm_provider", "llm_base_url", *ERROR_VIEWS)

    run_id: str
    spec: JobSpec = Field(json_schema_extra=NOT_A_COLUMN)
    status: Status
    job_error: JobError | None = Field(default=None, description="why the job ended other than ok (null when it "
                                       "ended ok); results.csv's `error` column is its message",
                                       json_schema_extra={"column": "error"})
    guide_errors_scored: int | None = Field(default=None, description="null unless the task opted in with "
                                            "`score_guide_errors`; then how many exceptions or non-finite scores "
                                            "of its guide were scored as failures instead of ending the job")
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
    carried_llm_calls: int | None = Field(default=None, description="the part of ``llm_calls`` that earlier, "
                                          "interrupted attempts of the job spent (0 for a job that ran once); null "
                                          "in older files of a job that ran once (version 7)")
    carried_tokens: int | None = Field(default=None, description="the part of ``total_tokens`` that earlier "
                                       "attempts spent; ``prompt_tokens`` + ``completion_tokens`` split the rest "
                                       "(version 7)")
    carried_cost_usd: float | None = Field(default=None, description="the part of ``cost_usd`` that earlier "
                                           "attempts spent (version 7)")
    measure_llm_calls: int | None = Field(default=None, description="the harness's measurement calls outside the "
                                          "budget (scoring states on the test split, and the parameters a stopped "
                                          "trainer left on the selection split; before selection was charged, every "
                                          "selection scoring too); null in files before version 4, "
                                          "whose ``llm_calls`` included them")
    measure_tokens: int | None = Field(default=None, description="total tokens of the measurement calls (version 4)")
    measure_cost_usd: float | None = Field(default=None, description="USD of the measurement calls (version 4)")
    eval_llm_calls: int | None = Field(default=None, description="the part of ``llm_calls`` that the task's evaluator "
                                       "made (an evaluator that calls an LLM, through the run's gateway, while the "
                                       "trainer evaluated programs); null for tasks whose evaluator calls none")
    eval_tokens: int | None = Field(default=None, description="the part of ``total_tokens`` of the evaluator's calls")
    eval_cost_usd: float | None = Field(default=None, description="the part of ``cost_usd`` of the evaluator's calls")
    selection_llm_calls: int | None = Field(default=None, description="the part of ``llm_calls`` that the harness "
                                            "spent scoring reported states on the selection split (the scores that "
                                            "pick the best state): charged to the budget and the cost; null in older "
                                            "files and in a job salvaged after a kill")
    selection_tokens: int | None = Field(default=None, description="the part of ``total_tokens`` of those calls")
    selection_cost_usd: float | None = Field(default=None, description="the part of ``cost_usd`` of those calls")
    llm_unanswered: int | None = Field(default=None, description="of this attempt's trainer calls, the requests "
                                       "the provider received whose answer never came back usable (client timeouts, "
                                       "lost connections, unusable answers, cancelled or cut-off calls), each "
                                       "charged estimated; null in records written before it was counted")
    budget_used: float | None = Field(default=None, description="the largest share of a budget limit the job spent "
                                      "(1.0: a limit reached); null without a budget (derived from ``spec.budget``, "
                                      "``budget_spent`` and ``n_evals``)")
    under_spent: bool | None = Field(default=None, description="the job left more than 10 % of its budget unspent; "
                                     "null without a budget (derived)")
    under_spent_reason: str = Field(default="", description="why, when ``under_spent``: `error: ...`, "
                                    "`reservation: ...`, `trainer_rule: ...` or `knob: ...` (derived; see "
                                    "docs/trainers.md, \"How each trainer spends a budget\")")
    key_refused: KeyRefusal | None = Field(default=None, description="the provider refused the key (401/403) or "
                                           "reported its quota spent for good during this job: the run stopped "
                                           "scheduling jobs", json_schema_extra=NOT_A_COLUMN)
    llm_errors: int = Field(default=0, json_schema_extra=NOT_A_COLUMN)
    llm_retries: int = Field(default=0, json_schema_extra=NOT_A_COLUMN)
    time_seconds: float = 0.0
    started_at: str = Field(default="", json_schema_extra={"kind": "timestamp"})
    finished_at: str = Field(default="", json_schema_extra={"kind": "timestamp"})
    attempt: int = Field(default=1, json_schema_extra=NOT_A_COLUMN)
    score_dict_best: dict[str, float | None] = Field(default_factory=dict, description="per-objective means of "
                                                     "the best state (the results.csv columns ``obj_<metric>``)",
                                                     json_schema_extra=NOT_A_COLUMN)
    best_state_failed: bool = Field(default=False, description="the best state raised or gave an unscorable "
                                    "output on a selection example (its score holds the task's failure score)",
                                    json_schema_extra=NOT_A_COLUMN)
    usage_by_role: dict[str, RoleUsage] = Field(default_factory=dict, json_schema_extra=NOT_A_COLUMN)
    budget_spent: Spend = Field(default_factory=Spend, description="what the job's budget counted, earlier attempts "
                                "included (the training phase; ``wall_s``: the job's wall clock)",
                                json_schema_extra=NOT_A_COLUMN)
    non_finite: list[str] = Field(default_factory=list, description="score fields whose value was NaN or "
                                  "infinite and is stored as null (version 2)", json_schema_extra=NOT_A_COLUMN)
    sandbox: str = Field(default="", description="the isolation LLM-written code ran under in this job: "
                         "bwrap, weak (both, comma-separated, if it changed), or empty when none ran (version 3)")
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
    best_known: float | None = Field(default=None, description="the best value published for the task (discovery "
                                     "tasks), of the metric it names; null when the task declares none")
    best_known_source: str = Field(default="", description="where the best known value comes from",
                                   json_schema_extra=NOT_A_COLUMN)
    pct_of_best_known: float | None = Field(default=None, description="how far the best state got, as % of the best "
                                            "known value (100 = matched, above = beaten; direction applied)")
    pct_of_alphaevolve: float | None = Field(default=None, description="the same against AlphaEvolve's value (the "
                                             "built-in discovery problems' second yardstick); null for other tasks "
                                             "(version 8)")
    best_known_score: float | None = Field(default=None, description="the selection score that stands for 100 % of "
                                           "the best known value (1.0 for the built-in discovery problems); cost to "
                                           "reach reads the curves against it; null where the task has none "
                                           "(version 8)")
    integrity_flags: list[str] = Field(default_factory=list, description="the audit's flags: `beyond_best_known` (a "
                                       "score above the best known value), `beyond_noise` (a fit better than the "
                                       "data's noise allows); details in artifacts/integrity.json")
    score_trust: str = Field(default="", description="`trusted`: the score was computed outside the candidate's "
                             "process; `candidate-reachable`: the candidate ran in the process that scored it "
                             "(a plain evaluate() task); empty for tasks that do not say")
    score_range: list[float | None] | None = Field(default=None, description="[low, high] the task declares its "
                                                   "scores lie in (null: unbounded on that side); null when it "
                                                   "declares none or in older files (version 8)")
    metrics_best: dict[str, float | None] = Field(default_factory=dict, description="the task evaluator's metrics "
                                                  "of the best state (discovery tasks)", json_schema_extra=NOT_A_COLUMN)
    resolved: Resolution = Field(default_factory=Resolution, description="what the job really used (written as "
                                 "the original's ``resolved_*``)", json_schema_extra=NOT_A_COLUMN)

    @model_validator(mode="after")
    def _status_of_its_error(self) -> JobResult:
        if self.job_error is not None and self.job_error.status != self.status:
            raise ValueError(f"status {self.status} is not its error's ({self.job_error.status})")
        return self

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

    @model_validator(mode="after")
    def _budget_use(self) -> JobResult:
        """``budget_used``, ``under_spent`` and its reason follow from the record (never set by hand)."""
        spent = {**self.budget_spent, "evaluations": self.n_evals} if self.budget_spent else {}
        used = budget_used(self.spec.budget, spent)
        reason = under_spent_reason(self.status, used, self.spec.trainer_kwargs)
        for name, value in (("budget_used", used), ("under_spent", None if used is None else bool(reason)),
                            ("under_spent_reason", reason)):
            if getattr(self, name) != value:
                object.__setattr__(self, name, value)  # no re-validation loop
        return self

    @classmethod
    def prepare(cls, data: dict[str, Any]) -> dict[str, Any]:
        version = data.get("schema_version")
        if not version or version == cls.SCHEMA_VERSION:
            data = error_from_text(data)  # keyword arguments may give the error as text, as files did
        return super().prepare(data)

    @property
    def error(self) -> str:
        """The job's error as a user reads it (results.csv's ``error`` column); empty for a job that ended ok."""
        return "" if self.job_error is None else self.job_error.message

    @property
    def traceback(self) -> str:
        """The traceback of the job's error (empty for none)."""
        return "" if self.job_error is None else self.job_error.traceback

    @property
    def job_id(self) -> str:
        return self.spec.job_id

    @property
    def arm(self) -> Arm:
        return self.spec.arm

    def view(self, name: str) -> Any:
        if name in ERROR_VIEWS:
            return getattr(self, name)
        if name in SPEC_VIEW_COLUMNS:
            return self.spec.columns()[name]
        if name in ("llm_provider", "llm_base_url"):
            return self.spec.endpoint()[name]
        if name in JobSpec.model_fields:
            return getattr(self.spec, name)
        raise KeyError(name)

    def columns(self) -> dict[str, Any]:
        """The record's results.csv columns (``CSV_COLUMNS``), in order, as Python values (no
        serialisation: the tables write 100,000 of them)."""
        return {"run_id": self.run_id, **self.spec.columns(), **{name: getattr(self, name) for name in OUTCOME_COLUMNS}}

    def arrange(self, flat: dict[str, Any], nested: dict[str, Any]) -> dict[str, Any]:
        """``schema_version``, ``run_id``, the specification's columns, the outcome, the original's
        names, and the embedded ``spec`` last."""
        spec = nested["spec"]
        head = {"schema_version": flat["schema_version"], "run_id": flat["run_id"], **self.spec.columns()}
        body: dict[str, Any] = {}
        for key, value in flat.items():
            if key not in head and key != "spec" and not key.startswith(RESOLVED_PREFIX):
                body[key] = value
                if key == "status":  # the error as text, where the file always had it
                    body.update({name: getattr(self, name) for name in ERROR_VIEWS})
        original = {"eval_kwargs": spec["eval_kwargs"],
                    **{k: v for k, v in flat.items() if k.startswith(RESOLVED_PREFIX)}, **self.spec.endpoint()}
        return {**head, **body, **original, "spec": spec}


def record_columns(model: type[JobResult]) -> tuple[str, ...]:
    """The results.csv columns of a record model, in order: ``run_id``, the specification's, then
    every field declared after ``spec`` unless it says ``column: false`` (``column: "<name>"``: the
    column has that name, the record's attribute of that name its value)."""
    names = list(model.model_fields)
    outcome = []
    for name in names[names.index("spec") + 1:]:
        extra = model.model_fields[name].json_schema_extra
        column = extra.get("column", True) if isinstance(extra, dict) else True
        if column is not False:
            outcome.append(column if isinstance(column, str) else name)
    return ("run_id", *SPEC_VIEW_COLUMNS, *outcome)


#: results.csv columns, in order (objective columns ``obj_<metric>`` and the original's columns follow)
CSV_COLUMNS: tuple[str, ...] = record_columns(JobResult)
#: the columns that are the record's own fields (after the specification's)
OUTCOME_COLUMNS: tuple[str, ...] = CSV_COLUMNS[1 + len(SPEC_VIEW_COLUMNS):]
#: The original Trace-Bench's results.csv columns that ours lack, in its order; written after ours and
#: after the ``obj_<metric>`` columns (see ``trace_bench.store.legacy_columns``).
LEGACY_CSV_COLUMNS = (
    "task_id", "trainer_id", "score_val_initial", "score_val_final", "score_val", "resolved_optimizer",
    "resolved_guide", "resolved_logger", "resolved_trainer_kwargs", "resolved_optimizer_kwargs",
    "resolved_guide_kwargs", "resolved_logger_kwargs", "eval_kwargs", "feedback", "llm_provider", "llm_base_url",
    "token_scope", "initial_state_path", "best_state_path", "final_state_path", "state_history_path", "tb_logdir",
)

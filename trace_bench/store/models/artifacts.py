"""Records of a job's live files and artifacts: ``heartbeat.json``, the rows of
``artifacts/curve.csv``, the state files, the lines of ``artifacts/state_history.jsonl`` and the
integrity audit ``artifacts/integrity.json``."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from trace_bench.store.models._base import StoreModel
from trace_bench.store.models.spend import Spend


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

    @classmethod
    def at(cls, spend: Spend, measured: Spend, **fields: Any) -> CurveRow:
        """A row at the trainer's ``spend`` (what a budget counts), with what the harness's
        measurement calls spent (``measured``) beside it."""
        return cls(llm_calls=spend.llm_calls, tokens=spend.tokens, usd=spend.usd, measure_llm_calls=measured.llm_calls,
                   measure_tokens=measured.tokens, measure_usd=measured.usd, **fields)


#: the kinds whose score counts towards ``best_score`` (the trainer's validated states)
CREDITED_CURVE_KINDS = ("initial", "step", "final")
#: curve.csv's columns, in order (the ``obj_<metric>`` columns of a multi-objective task follow)
CURVE_COLUMNS: tuple[str, ...] = tuple(name for name in CurveRow.model_fields
                                       if name not in ("schema_version", "objectives"))
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
    state: str = Field(description="best, final, or outputs (what the candidates printed or returned while the "
                       "job trained)")
    parameter: str = ""
    excerpt: str = Field(default="", description="the matched text, masked to its first words")
    words: int = 0
    in_initial: bool = Field(default=False, description="the initial state held the same text: the task handed it "
                             "to the optimizer")
    encoding: str = Field(default="", description="how the text was hidden (base64, hex, zlib, gzip, deflate, "
                          "reversed, escaped, joined by +); empty when written as is (version 2)")


class IntegrityFlag(BaseModel):
    """A score the data or the literature says an honest candidate cannot reach (see the audit)."""

    model_config = ConfigDict(extra="allow")

    kind: Literal["beyond_best_known", "beyond_noise"] = Field(
        description="beyond_best_known: above 100 % of the best known value; beyond_noise: a fit better than the "
                    "data's noise allows")
    field: str = Field(default="", description="the score it is about (score_best, score_test_best, pct_of_best_known)")
    value: float | None = None
    bound: float | None = Field(default=None, description="the bound it passed")
    verified: bool | None = Field(default=None, description="beyond_best_known: whether an exact re-check confirmed "
                                  "it (null: the task has none)")
    detail: str = ""


class IntegrityReport(StoreModel):
    """``artifacts/integrity.json``: the job's leakage audit (what ``leaked_*`` in results.json count), its
    sandbox denials per kind and its flags.  Version 2 adds ``flags``, ``outputs_searched`` and the
    findings' ``encoding`` (a version-1 file reads with none)."""

    SCHEMA_VERSION: ClassVar[int] = 2
    FILE: ClassVar[str] = "integrity.json"

    searched: dict[str, int] = Field(default_factory=dict, description="items searched for, per split")
    shared_with_train: dict[str, int] = Field(default_factory=dict, description="items left out because a "
                                              "training input is the same (not held out)")
    leaked: dict[str, list[int]] = Field(default_factory=dict, description="indices of the leaked items, per split")
    findings: list[LeakFinding] = Field(default_factory=list)
    more_findings: int = Field(default=0, description="findings beyond the ones listed")
    states: list[str] = Field(default_factory=list, description="the states searched (best, final)")
    sandbox_denials: dict[str, int] = Field(default_factory=dict, description="denials per kind")
    outputs_searched: int = Field(default=0, description="candidate calls whose output (printed or returned text, "
                                  "while the job trained) was searched as the state `outputs`")
    flags: list[IntegrityFlag] = Field(default_factory=list, description="scores beyond what the best known value "
                                       "or the data's noise allows")
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

"""A line of a job's ``artifacts/transcript.jsonl``: one LLM call's messages and answers.

The job's ``llm_call`` events count a call (tokens, cost, latency); its transcript entry keeps
what was said: the messages sent, the answer(s) received, and where the call stood (role, phase,
caller, the trainer step in progress).  Every call the session meters gets one entry, answered or
not: a call whose answer never came back usable says why (``unanswered``), a call that failed says
how (``error``), so the transcript lists every request the provider received.

Texts are bounded: a message or answer longer than the job's ``llm.transcript_max_chars`` keeps
its head and tail around a marker (:data:`CUT_MARKER`), and ``cut_chars`` counts what was left
out; once the file reaches ``llm.transcript_max_mb`` later entries keep their figures but no text
(``omitted`` says so).  Secrets are masked like every file of a run.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from trace_bench.store.models._base import StoreModel

#: What stands where a long text was cut (``{cut}`` characters left out of ``{total}``).
CUT_MARKER = "\n[... trace-bench cut {cut:,} of {total:,} characters here ...]\n"


class TranscriptMessage(BaseModel):
    """One message of a request, as text (a list of content parts is joined: text parts as they
    are, other parts as ``[<type>]``)."""

    model_config = ConfigDict(extra="allow")

    role: str = ""
    content: str = ""


class TranscriptEntry(StoreModel):
    """One LLM call of the job, in the order the calls ended."""

    SCHEMA_VERSION: ClassVar[int] = 1
    FILE: ClassVar[str] = "transcript.jsonl"

    call: int = Field(description="number of the call within the job's attempt, from 1, in the order the calls "
                      "were sent")
    ts: str = Field(default="", description="UTC ISO-8601 with milliseconds, when the call ended")
    step: int = Field(default=0, description="the trainer step in progress when the call was sent: 0 while the "
                      "initial state is measured, k for a call made after step k-1 was reported (it leads to "
                      "step k's state); calls after the last step measure the final state")
    role: str = Field(default="", description="optimizer, agent or judge")
    phase: Literal["train", "measure"] = "train"
    caller: str | None = Field(default=None, description="`evaluator`: made by the task's evaluator through "
                               "the run's gateway")
    model: str = ""
    request: str = Field(default="", description="the request's content key (the record/replay cache's, "
                         "shortened): the same request in a recording and its replay")
    params: dict[str, Any] = Field(default_factory=dict, description="the sampling parameters sent "
                                   "(temperature, max_tokens, n, ...)")
    messages: list[TranscriptMessage] = Field(default_factory=list)
    answers: list[str] = Field(default_factory=list, description="one text per choice (empty for a call "
                               "that was not answered)")
    prompt_tokens: int = 0
    completion_tokens: int = 0
    cost_usd: float = 0.0
    estimated: bool = False
    cached: bool = Field(default=False, description="answered from the record/replay cache")
    latency_s: float | None = None
    unanswered: Literal["timed_out", "connection_lost", "unusable", "cancelled", "cut_off"] | None = Field(
        default=None, description="the provider received the request and its answer never came back usable: "
        "why (the call is charged estimated, as its llm_call event says)")
    error: str | None = Field(default=None, description="why the call failed or stopped without an answer")
    cut_chars: int = Field(default=0, description="characters left out of this entry's texts by "
                           "llm.transcript_max_chars (each cut is marked in its text)")
    omitted: str | None = Field(default=None, description="why this entry holds no text (the transcript "
                                "reached llm.transcript_max_mb)")

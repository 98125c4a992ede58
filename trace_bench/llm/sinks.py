"""Where a session writes each call it meters, besides its events: the job's spend journal
(``store.spend``) and the job's transcript (``store.transcript``).

For the transcript, the session keeps with each call in flight the
:class:`~trace_bench.llm.calls.Request` an entry needs beyond the call's outcome: its number, the
trainer step in progress, the messages and sampling parameters as sent, its content key.
:func:`transcribe` writes the entry when the call ends, whichever way it ends; a transcript that
cannot be written never fails the call.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from trace_bench.llm.calls import Request
from trace_bench.llm.types import Completion


class SpendSink(Protocol):
    """Where the spend of each call is journaled (``store.spend.SpendJournal``)."""

    def sent(self, prompt_tokens: int, *, phase: str = "train", completion_cap: int | None = None,
             usd_if_cut: float = 0.0) -> int: ...

    def settled(self, call: int, *, llm_calls: int, tokens: int, usd: float) -> None: ...


class TranscriptSink(Protocol):
    """Where a job's calls are transcribed (``store.transcript.TranscriptLog``)."""

    def write(self, call: Mapping[str, Any], messages: Sequence[Any], answers: Sequence[str]) -> None: ...

    def close(self) -> None: ...


def transcribe(sink: TranscriptSink | None, request: Request | None, *, role: str, model: str, phase: str,
               caller: str | None, completion: Completion | None = None, latency: float | None = None,
               error: str | None = None) -> None:
    """Write one call's entry: answered or charged unanswered (``completion``), or failed (``error``)."""
    if sink is None or request is None:
        return
    fields: dict[str, Any] = {"call": request.number, "step": request.step, "role": role, "phase": phase}
    if caller:
        fields["caller"] = caller
    fields.update(model=completion.model or model if completion is not None else model, request=request.key[:16],
                  params=request.sampling())
    answers: list[str] = []
    if completion is not None:
        usage = completion.usage
        answers = completion.texts
        fields.update(prompt_tokens=usage.prompt_tokens, completion_tokens=usage.completion_tokens,
                      cost_usd=completion.cost_usd or 0.0, estimated=completion.estimated, cached=completion.cached)
        if completion.unanswered:
            fields["unanswered"] = completion.unanswered
    if latency is not None:
        fields["latency_s"] = round(latency, 6)
    if error:
        fields["error"] = error
    try:
        sink.write(fields, request.messages, answers)
    except (OSError, ValueError, TypeError):  # a transcript is for reading: it never fails a call
        pass

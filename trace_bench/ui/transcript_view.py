"""The Job inspector's conversation view: a job's LLM calls of one trainer step, beside the state
that step produced.

A job's transcript (``artifacts/transcript.jsonl``, docs/artifacts.md) tags each call with the step
in progress when it was made: step ``k``'s calls lead to the state the trainer reported at step ``k``
(its ``state_history.jsonl`` line when the trainer accepted it), step 0's measure the initial state,
and the calls after the last step measure the final state.  Everything shown is masked and escaped
(:func:`trace_bench.ui.readers.masked`): a transcript is text an LLM wrote.
"""

from __future__ import annotations

import html
import json
from typing import Any

from trace_bench.store.job_store import JobStore
from trace_bench.store.models import StateHistoryLine, StoreError, TranscriptEntry
from trace_bench.ui.readers import masked

#: calls of one step drawn at most (a DSPy job reports one step for all its calls)
MAX_CALLS = 40
#: a message longer than this starts folded
FOLD_CHARS = 1200

STYLE = """<style>
.tb-conv{display:grid;grid-template-columns:minmax(0,3fr) minmax(0,2fr);gap:12px;align-items:start;
  max-height:1100px;overflow:auto}
.tb-conv pre{white-space:pre-wrap;word-break:break-word;margin:4px 0;max-height:420px;overflow:auto;
  font-size:12px;line-height:1.35}
.tb-call{border:1px solid #d0d7de;border-radius:8px;padding:6px 10px;margin:0 0 10px 0}
.tb-call-head{font-size:12px;color:#57606a;margin-bottom:4px}
.tb-badge{display:inline-block;border-radius:6px;padding:0 6px;margin-left:4px;font-size:11px;background:#eaeef2}
.tb-badge.tb-bad{background:#ffebe9;color:#82071e}
.tb-msg{border-left:3px solid #d0d7de;padding-left:8px;margin:4px 0}
.tb-msg.tb-system{border-color:#8c959f}.tb-msg.tb-user{border-color:#0969da}
.tb-msg.tb-assistant{border-color:#1a7f37;background:#f6fff8}
.tb-role{font-size:12px;font-weight:600;color:#57606a}
.tb-state{border:1px solid #d0d7de;border-radius:8px;padding:6px 10px;position:sticky;top:0}
</style>"""


def step_choices(job: JobStore) -> tuple[list[tuple[str, str]], str | None]:
    """(label, value) of every step the transcript or the state history names, in order, and the
    one shown when none is picked: the last with calls (a live job's current step)."""
    calls = job.transcript_steps()
    history = job.read_state_history()
    reported = {line.step for line in history if line.kind == "step"}
    final = _final(history)
    choices = []
    for step in sorted(set(calls) | reported | ({0} if calls else set())):
        count = calls.get(step, 0)
        what = ("initial state" if step == 0 else "after the last step: final state"
                if final is not None and step > final.step else f"step {step}")
        choices.append((f"{what} · {count} call{'' if count == 1 else 's'}", str(step)))
    shown = max(calls) if calls else (max(reported) if reported else None)
    return choices, None if shown is None else str(shown)


def conversation_html(job: JobStore, step: str | None) -> str:
    """The calls of ``step`` beside the state it produced (a message when there is nothing to show)."""
    if step is None or not str(step).isdigit():
        note = ("This job kept no transcript (llm.transcripts: false, or a run from before transcripts)."
                if not job.transcript_path.exists() else "Pick a step.")
        return f'<p id="tb-transcript-empty">{html.escape(note)}</p>'
    number = int(step)
    try:
        entries = job.read_transcript(step=number)
        history = job.read_state_history()
    except StoreError as exc:
        return f"<p>{html.escape(masked(str(exc)))}</p>"
    shown = entries[:MAX_CALLS]
    calls = "".join(_call_html(entry) for entry in shown)
    if len(entries) > len(shown):
        calls += (f"<p>{len(entries) - len(shown)} more calls of this step are in the job's "
                  "artifacts/transcript.jsonl.</p>")
    if not entries:
        calls = "<p>No LLM call was made in this step.</p>"
    return (f'{STYLE}<div class="tb-conv" data-step="{number}" data-calls="{len(entries)}">'
            f'<div class="tb-calls">{calls}</div>{_state_html(number, history)}</div>')


def _call_html(entry: TranscriptEntry) -> str:
    badges = [entry.role, entry.phase, *([f"caller {entry.caller}"] if entry.caller else []),
              *(["cached"] if entry.cached else []), *(["estimated"] if entry.estimated else [])]
    bad = [f"unanswered: {entry.unanswered}"] if entry.unanswered else []
    if entry.error:
        bad.append(entry.error[:300])
    if entry.cut_chars:
        bad.append(f"{entry.cut_chars:,} characters cut")
    tokens = f"{entry.prompt_tokens}+{entry.completion_tokens} tokens"
    latency = f" · {entry.latency_s:.3g} s" if entry.latency_s is not None else ""
    head = (f'<div class="tb-call-head">call {entry.call} · {html.escape(masked(entry.model))} · {tokens}{latency}'
            + "".join(f'<span class="tb-badge">{html.escape(masked(b))}</span>' for b in badges)
            + "".join(f'<span class="tb-badge tb-bad">{html.escape(masked(b))}</span>' for b in bad) + "</div>")
    if entry.omitted:
        return f'<div class="tb-call">{head}<p>{html.escape(entry.omitted)}</p></div>'
    messages = "".join(_message_html(message.role, message.content) for message in entry.messages)
    answers = "".join(_message_html("assistant" if len(entry.answers) == 1 else f"assistant (choice {i + 1})", text,
                                    fold=False) for i, text in enumerate(entry.answers))
    if not entry.answers:
        answers = '<div class="tb-msg tb-assistant"><span class="tb-role">no answer</span></div>'
    return f'<div class="tb-call" data-call="{entry.call}">{head}{messages}{answers}</div>'


def _message_html(role: str, text: str, *, fold: bool = True) -> str:
    kind = role.split(" ")[0] if role.split(" ")[0] in ("system", "user", "assistant") else "user"
    body = f"<pre>{html.escape(masked(text))}</pre>"
    label = html.escape(role or "message")
    if fold and (kind == "system" or len(text) > FOLD_CHARS):
        first = html.escape(masked(text.strip().splitlines()[0][:120])) if text.strip() else ""
        return (f'<details class="tb-msg tb-{kind}"><summary><span class="tb-role">{label}</span> '
                f"{first} … ({len(text):,} characters)</summary>{body}</details>")
    return f'<div class="tb-msg tb-{kind}"><span class="tb-role">{label}</span>{body}</div>'


def _final(history: list[StateHistoryLine]) -> StateHistoryLine | None:
    return next((line for line in reversed(history) if line.kind == "final"), None)


def _state_html(step: int, history: list[StateHistoryLine]) -> str:
    """The state ``step``'s calls led to, from the state history."""
    reported = next((line for line in history if line.kind == "step" and line.step == step), None)
    final = _final(history)
    if step == 0:
        line, title = next((ln for ln in history if ln.kind == "initial"), None), "initial state"
    elif reported is not None:
        line, title = reported, f"state reported at step {step}"
    elif final is not None and step > final.step:  # the final line's step is the last one reported
        line, title = final, "final state"
    else:
        return ('<div class="tb-state"><b>No state of this step in state_history.jsonl</b>: the trainer did not '
                "accept it (its score is in the step's event), or the job stopped before reporting it.</div>")
    if line is None:
        return '<div class="tb-state">(state_history.jsonl: not written yet)</div>'
    score = "-" if line.score is None else f"{line.score:.6g}"
    params = "".join(f"<div><span class=\"tb-role\">{html.escape(masked(p.name or f'parameter {p.index}'))}</span>"
                     f"<pre>{html.escape(masked(value_text(p.value)))}</pre></div>" for p in line.state.parameters)
    return f'<div class="tb-state" id="tb-transcript-state"><b>{title}</b> · score {score}{params}</div>'


def value_text(value: Any) -> str:
    """A parameter's value as text: a string as it is, anything else as indented JSON."""
    return value if isinstance(value, str) else json.dumps(value, indent=2, sort_keys=True, default=str)

"""The Job inspector's state diff: what changed between any two states of a job.

The states a job keeps: ``initial``, ``best`` and ``final`` (``artifacts/<kind>_state.yaml``) and
every state of its history (``state_history.jsonl``: the initial state, each accepted step, the
final state).  Parameters are matched by name (by position when unnamed); a changed one is shown
as a line diff of its value's text (a string as it is, anything else as indented JSON), unchanged
ones are named on one line.  Everything shown is masked and escaped.
"""

from __future__ import annotations

import difflib
import html
from dataclasses import dataclass, field

from trace_bench.store.job_store import JobStore
from trace_bench.store.models import StateParameter, StoreError
from trace_bench.ui.readers import masked
from trace_bench.ui.transcript_view import value_text

FILES = ("initial", "best", "final")
STYLE = """<style>
.tb-diff pre{white-space:pre-wrap;word-break:break-word;margin:2px 0 8px 0;font-size:12px;line-height:1.35;
  max-height:480px;overflow:auto;border:1px solid #d0d7de;border-radius:6px;padding:4px 6px}
.tb-diff .tb-add{background:#dafbe1;display:block}.tb-diff .tb-del{background:#ffebe9;display:block}
.tb-diff .tb-hunk{color:#8250df;display:block}.tb-diff .tb-name{font-weight:600}
</style>"""


@dataclass
class State:
    """One state of the job: its label, score and parameter values by name."""

    label: str
    score: float | None = None
    values: dict[str, str] = field(default_factory=dict)


def state_choices(job: JobStore) -> list[tuple[str, str]]:
    """(label, value) of every state the job keeps: the three files, then each step of its history."""
    choices = [(kind, kind) for kind in FILES if job.state_path(kind).exists()]
    try:
        history = job.read_state_history()
    except StoreError:
        history = []
    choices += [(f"step {line.step}" + ("" if line.score is None else f" (score {line.score:.4g})"),
                 f"step:{line.step}") for line in history if line.kind == "step"]
    return choices


def load_state(job: JobStore, key: str) -> State | None:
    """The state a :func:`state_choices` value names; None when the job has no such state (yet)."""
    if key in FILES:
        state = job.read_state(key)
        if state is None:
            return None
        step = f", step {state.step}" if state.step is not None else ""
        return State(f"{key}{step}", state.score, _values(state.parameters))
    if key.startswith("step:") and key[5:].isdigit():
        number = int(key[5:])
        line = next((ln for ln in job.read_state_history() if ln.kind == "step" and ln.step == number), None)
        if line is not None:
            return State(f"step {number}", line.score, _values(line.state.parameters))
    return None


def _values(parameters: list[StateParameter]) -> dict[str, str]:
    return {str(p.name or f"parameter {p.index}"): masked(value_text(p.value)) for p in parameters}


def diff_html(job: JobStore, before: str | None, after: str | None) -> str:
    """The diff from state ``before`` to state ``after`` (a message when either is missing)."""
    if not before or not after:
        return "<p>Pick two states.</p>"
    try:
        old, new = load_state(job, before), load_state(job, after)
    except StoreError as exc:
        return f"<p>{html.escape(masked(str(exc)))}</p>"
    missing = [key for key, state in ((before, old), (after, new)) if state is None]
    if old is None or new is None:
        return f"<p>Not written yet: {html.escape(', '.join(missing))}.</p>"
    head = f"<p><b>{html.escape(old.label)}</b> (score {_score(old)}) → <b>{html.escape(new.label)}</b> " \
           f"(score {_score(new)})</p>"
    same, blocks = [], []
    for name in [*old.values, *(n for n in new.values if n not in old.values)]:
        a, b = old.values.get(name), new.values.get(name)
        if a == b:
            same.append(name)
            continue
        lines = difflib.unified_diff((a or "").splitlines(), (b or "").splitlines(), lineterm="", n=3,
                                     fromfile=before, tofile=after)
        body = "".join(_line_html(line) for line in list(lines)[2:])
        note = " (only in the second state)" if a is None else " (only in the first state)" if b is None else ""
        blocks.append(f'<div class="tb-changed" data-name="{html.escape(name)}"><span class="tb-name">'
                      f"{html.escape(name)}</span>{note}<pre>{body}</pre></div>")
    summary = (f"<p>{len(blocks)} changed, {len(same)} unchanged" +
               (f": {html.escape(', '.join(same))}" if same else "") + "</p>")
    if not blocks:
        summary = "<p>The two states are the same.</p>" + summary
    return (f'{STYLE}<div class="tb-diff" data-changed="{len(blocks)}">{head}{summary}'
            f'{"".join(blocks)}</div>')


def _line_html(line: str) -> str:
    kind = "tb-add" if line.startswith("+") else "tb-del" if line.startswith("-") else \
        "tb-hunk" if line.startswith("@@") else ""
    text = html.escape(line)
    return f'<span class="{kind}">{text}</span>' if kind else f"{text}\n"


def _score(state: State) -> str:
    return "-" if state.score is None else f"{state.score:.6g}"

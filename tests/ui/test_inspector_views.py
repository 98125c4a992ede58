"""The Job inspector's transcript and diff views without a browser, on a job directory written
through the store: what an LLM wrote is escaped, steps and states pair up, a diff names what changed."""

from __future__ import annotations

from pathlib import Path

from trace_bench.store.job_store import JobStore
from trace_bench.store.models import StateFile, StateHistoryLine, StateParameter, StateSnapshot
from trace_bench.ui.state_diff import diff_html, state_choices
from trace_bench.ui.transcript_view import conversation_html, step_choices

PROMPT = [{"role": "system", "content": "Propose a better prompt."}, {"role": "user", "content": "Now: be brief"}]


def _state(prompt: str, temperature: float) -> list[StateParameter]:
    return [StateParameter(index=0, name="prompt", value=prompt), StateParameter(index=1, name="temperature",
                                                                                 value=temperature)]


def _job(tmp_path: Path) -> JobStore:
    """Initial state, step 1 (accepted), step 2 (not accepted: no history line), final; calls of steps 1-3."""
    job = JobStore(tmp_path / "job")
    states = {"initial": _state("Be brief.\nAnswer.", 0.0), "step": _state("Be brief.\nAnswer with a number.", 0.0),
              "final": _state("Be brief.\nAnswer with a number.", 0.5)}
    history = job.open_state_history()
    history.append(StateHistoryLine(kind="initial", step=0, score=0.1, state=StateSnapshot(parameters=states["initial"])))
    history.append(StateHistoryLine(kind="step", step=1, score=0.4, state=StateSnapshot(parameters=states["step"])))
    history.append(StateHistoryLine(kind="final", step=2, score=0.3, state=StateSnapshot(parameters=states["final"])))
    history.close()
    job.write_state("initial", StateFile(parameters=states["initial"], score=0.1))
    job.write_state("best", StateFile(parameters=states["step"], score=0.4, step=1))
    job.write_state("final", StateFile(parameters=states["final"], score=0.3))
    log = job.open_transcript()
    for number, step, answer in ((1, 1, "<script>alert(1)</script> Answer with a number."), (2, 2, "no change"),
                                 (3, 3, "")):
        fields = {"call": number, "step": step, "role": "optimizer", "phase": "train" if step < 3 else "measure",
                  "model": "m", "prompt_tokens": 5, "completion_tokens": 3}
        log.write({**fields, **({"unanswered": "timed_out"} if not answer else {})}, PROMPT,
                  [answer] if answer else [])
    log.close()
    return job


def test_each_step_shows_its_calls_beside_the_state_they_led_to(tmp_path: Path) -> None:
    job = _job(tmp_path)
    choices, shown = step_choices(job)
    assert [value for _, value in choices] == ["0", "1", "2", "3"] and shown == "3"
    assert [label.split(" · ")[0] for label, _ in choices] == ["initial state", "step 1", "step 2",
                                                              "after the last step: final state"]
    first = conversation_html(job, "1")
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in first and "<script>" not in first
    assert "state reported at step 1" in first and "Answer with a number." in first
    assert "the trainer did not accept it" in conversation_html(job, "2")
    last = conversation_html(job, "3")
    assert "final state" in last and "unanswered: timed_out" in last and "no answer" in last
    assert "No LLM call was made in this step" in conversation_html(job, "0")


def test_any_two_states_diff_by_parameter(tmp_path: Path) -> None:
    job = _job(tmp_path)
    assert [value for _, value in state_choices(job)] == ["initial", "best", "final", "step:1"]
    diff = diff_html(job, "initial", "final")
    assert 'data-changed="2"' in diff
    assert '<span class="tb-del">-Answer.</span>' in diff and '<span class="tb-add">+Answer with a number.</span>' in diff
    assert '<span class="tb-add">+0.5</span>' in diff
    same = diff_html(job, "best", "step:1")
    assert "The two states are the same" in same and "2 unchanged: prompt, temperature" in same


def test_a_job_without_a_transcript_says_why(tmp_path: Path) -> None:
    job = JobStore(tmp_path / "job")
    assert step_choices(job) == ([], None)
    assert "kept no transcript" in conversation_html(job, None)
    assert "Not written yet: initial, best" in diff_html(job, "initial", "best")

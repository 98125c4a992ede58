"""Records for jobs that did not report (killed on timeout, out of memory, crashed, interrupted).

What a job writes as it goes (curve.csv, events.jsonl, best_state.yaml, llm_spend.jsonl) is
enough to keep its best-so-far result and the LLM spend so far, so a killed job is still a useful
row.  Calls the kill cut off in flight are spend too (the provider received and bills them): the
journal's unsettled ``sent`` lines are charged with their prompt and a completion up to their
``max_tokens`` limit, flagged ``tokens_estimated``, and the curve gets a closing ``stop`` row at the
job's total spend (no score: the parameters the kill left were never measured).  Its traceback
field holds the tail of its stdout.log (a killed process leaves no Python traceback; a crash
prints one there).
"""

from __future__ import annotations

from typing import Literal

from trace_bench.execution.job_process import Finished
from trace_bench.store.events import utc_now
from trace_bench.store.job_store import JobStore
from trace_bench.store.live import JobProgress
from trace_bench.store.live_result import LiveResult
from trace_bench.store.models import CurveRow, JobError, JobResult, JobSpec, Spend, StoreError
from trace_bench.store.models.error import Phase
from trace_bench.store.spend import cut_off_calls, cut_off_charge
from trace_bench.store.status import Status


def _spent(job: JobStore, phase: Literal["train", "measure"]) -> Spend:
    """The ``phase`` spend of a job's attempt: its journal, where calls a kill cut off in flight are
    charged too; the ``llm_call`` events for a directory written before the journal existed."""
    journal = job.read_spend(phase)
    if journal is not None:
        return journal
    progress = JobProgress.of(job.events(contains='"llm_call"'))
    return (progress.train if phase == "train" else progress.measure).spend()


def spent_in_training(job: JobStore) -> Spend:
    """LLM spend of a job's attempt, as the budget counts it (training phase only, cache answers included)."""
    return _spent(job, "train")


def spent_measuring(job: JobStore) -> Spend:
    """The harness's measurement calls of a job's attempt (billed, outside the budget)."""
    return _spent(job, "measure")


def salvage_record(spec: JobSpec, job: JobStore, *, run_id: str, status: str, error: str, wall_s: float,
                   attempt: int, carried: Spend | None = None, carried_measure: Spend | None = None,
                   phase: Phase = "process") -> JobResult:
    """A record built from what the job wrote: scores from its curve, usage from its events (the
    trainer's calls as the job's spend, the harness's measurement calls apart, as a finished job)
    and its sandbox denials; its leak counts stay null (the audit runs when a job ends by itself).
    Its error is the driver's verdict (``error``, in ``phase``: ``plan`` for a job never run), with
    the tail of its stdout.log as the traceback.  ``carried``/``carried_measure``: what earlier
    attempts spent training and measuring (``attempts.json``)."""
    live = LiveResult(spec, run_id, attempt, carried_measure=carried_measure)
    tail = job.read_stdout_tail()
    live.fail(JobError(status=Status(status), message=error, phase=phase,
                       traceback=f"{error}\n--- the last lines of stdout.log ---\n{tail}" if tail.strip() else error))
    live.set(time_seconds=round(wall_s, 6), finished_at=utc_now())
    rows = job.read_curve()
    if rows:
        bests = [r.best_score for r in rows if r.best_score is not None]
        live.set(score_initial=rows[0].score, score_final=rows[-1].score, score_best=max(bests) if bests else None,
                 n_steps=rows[-1].step)
    progress = JobProgress.of(job.events())  # denials too: written as they happened (the audit never ran)
    train, measure = progress.train, progress.measure
    live.set(started_at=progress.started_at, sandbox_denials=sum(progress.denials.values()),
             sandbox_denial_kinds=dict(sorted(progress.denials.items())))
    for entry in cut_off_calls(job.spend_path):
        cut_prompt, cut_completion, cut_cost = cut_off_charge(entry)
        (measure if entry.phase == "measure" else train).add_call(
            prompt_tokens=cut_prompt, completion_tokens=cut_completion, total_tokens=cut_prompt + cut_completion,
            cost_usd=cut_cost, estimated=True, unanswered=True)
    carried = carried or Spend()
    live.charge(train, measure, carried, spent_in_training(job).plus(carried),
                estimated=train.estimated or measure.estimated, evaluator=progress.by_caller.get("evaluator"))
    record = live.freeze()
    if rows and rows[-1].kind not in ("final", "harness_final", "stop"):
        _close_curve(job, rows[-1], record, wall_s)
    return record


def _close_curve(job: JobStore, last: CurveRow, record: JobResult, wall_s: float) -> None:
    """A last ``stop`` row at the killed job's total spend (calls that came back after the last
    step, calls cut off in flight), with its best score so far and no score of its own: the curve
    reaches what the job spent, and shows nothing the kill left unmeasured."""
    try:
        spend = Spend(llm_calls=record.llm_calls, tokens=record.total_tokens, usd=round(record.cost_usd, 10))
        measured = Spend(llm_calls=record.measure_llm_calls or 0, tokens=record.measure_tokens or 0,
                         usd=round(record.measure_cost_usd or 0.0, 10))
        job.append_curve_row(CurveRow.at(spend, measured, step=last.step, wall_s=max(last.wall_s or 0.0, round(wall_s, 6)),
                                         n_evals=last.n_evals, score=None, best_score=record.score_best, kind="stop"))
    except (OSError, StoreError):
        pass  # the record stands without it


def record_for(spec: JobSpec, job: JobStore, finished: Finished, *, run_id: str, attempt: int,
               carried: Spend | None, timeout: float | None, memory_mb: int | None,
               interrupted: bool = False, carried_measure: Spend | None = None) -> JobResult:
    """The record of a job process that ended: the one it sent, or one salvaged from its files."""
    if finished.record is not None and finished.killed_reason is None:
        # the job was launched with ``spec``: its record embeds the plan's object, not a copy of it
        return JobResult.model_validate({**finished.record, "spec": spec})
    if finished.killed_reason == "timeout":
        status, error = Status.TIMEOUT, f"job_timeout: exceeded {timeout or 0:g}s (process group killed)"
    elif finished.killed_reason == "interrupted" or (interrupted and finished.record is None):
        # A job that died without a result after Ctrl-C went down with the interrupt, not on its own.
        status, error = Status.INTERRUPTED, "interrupted by the user (resume to run it again)"
    elif finished.exitcode is not None and finished.exitcode < 0 and memory_mb and finished.exitcode == -9:
        status, error = Status.OOM, f"killed (signal 9) with job_memory_mb={memory_mb}"
    else:
        status, error = Status.FAILED, finished.error or \
            f"worker lost: job process exited with code {finished.exitcode} without a result"
    return salvage_record(spec, job, run_id=run_id, status=status, error=error, wall_s=finished.wall_s,
                          attempt=attempt, carried=carried, carried_measure=carried_measure)
